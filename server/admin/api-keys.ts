import type { ApiKeyView } from '../../shared/schemas/admin.ts';
import { hashApiKey, newApiKey } from '../auth/api-keys.ts';
import { isKnownScope, SCOPE } from '../auth/scopes.ts';
import type { Database } from '../db/database.ts';
import type { Prisma, PrismaClient } from '../db/generated/client.ts';
import { err, ok, type Result } from '../result.ts';
import { clientExists } from './clients.ts';

/** A key made and hashed, not yet stored (see prepareApiKey). */
export type PreparedApiKey = Awaited<ReturnType<typeof keyRow>>;

/**
 * Checks the scopes and makes the key with its argon2id hash, before any transaction: the hash
 * takes tens of milliseconds that no database connection should wait through.
 */
export async function prepareApiKey(
  input: { clientId: string; name?: string | undefined; scopes: string[] },
  now: Date,
): Promise<Result<PreparedApiKey, { kind: 'unknown_scopes'; scopes: { index: number; scope: string }[] }>> {
  const unknown = input.scopes
    .map((scope, index) => ({ index, scope }))
    .filter(({ scope }) => !isKnownScope(scope));
  if (unknown.length > 0) return err({ kind: 'unknown_scopes', scopes: unknown });
  const scopes = [...new Set(input.scopes)];
  return ok(await keyRow({ clientId: input.clientId, name: input.name ?? null, scopes }, now));
}

/** Stores a prepared key for its client, within the caller's transaction. */
export async function storeApiKey(
  tx: Prisma.TransactionClient,
  key: PreparedApiKey,
): Promise<Result<{ keyId: string; apiKey: string; scopes: string[] }, { kind: 'client_not_found' }>> {
  const { clientId } = key.row;
  if (clientId === null || !(await clientExists(tx, clientId))) return err({ kind: 'client_not_found' });
  await tx.apiKey.create({ data: key.row, select: { id: true } });
  return ok({ keyId: key.keyId, apiKey: key.apiKey, scopes: key.row.scopes });
}

/** A fresh key and the row that stores it: the argon2id hash, never the key. */
async function keyRow(input: { clientId: string | null; name: string | null; scopes: string[] }, now: Date) {
  const key = newApiKey();
  return {
    keyId: key.keyId,
    apiKey: key.apiKey,
    row: {
      id: key.keyId,
      clientId: input.clientId,
      name: input.name,
      hash: await hashApiKey(key.apiKey),
      start: key.start,
      scopes: input.scopes,
      createdAt: now,
    },
  };
}

/** Revoking twice is fine (the first revocation time stays); an unknown key id is not. */
export async function revokeApiKey(
  prisma: Prisma.TransactionClient,
  keyId: string,
  now: Date,
): Promise<boolean> {
  const { count } = await prisma.apiKey.updateMany({
    where: { id: keyId, revokedAt: null },
    data: { revokedAt: now },
  });
  if (count > 0) return true;
  return (await prisma.apiKey.findUnique({ where: { id: keyId }, select: { id: true } })) !== null;
}

/** A client's keys, oldest first, revoked ones included (with their revocation time). */
export async function listApiKeys(
  prisma: PrismaClient,
  clientId: string,
): Promise<Result<ApiKeyView[], 'client_not_found'>> {
  if (!(await clientExists(prisma, clientId))) return err('client_not_found');
  const rows = await prisma.apiKey.findMany({
    where: { clientId },
    select: { id: true, name: true, scopes: true, createdAt: true, lastUsedAt: true, revokedAt: true },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return ok(
    rows.map((row) => ({
      keyId: row.id,
      name: row.name,
      scopes: row.scopes,
      createdAt: row.createdAt.toISOString(),
      lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
      revokedAt: row.revokedAt?.toISOString() ?? null,
    })),
  );
}

/**
 * Transaction-scoped advisory lock around the first-start admin key, so that of several servers
 * starting at once on one database exactly one creates it (the others wait, then see it).
 */
const ADMIN_KEY_LOCK = 7_461_207;

/** The admin key made at first start; null when the database already holds a usable admin key. */
export type FirstAdminKey = { keyId: string; apiKey: string } | null;

/**
 * hasAdminKey on the driver (Database.queryDirect): the read every later start makes before it
 * listens, so that no start waits for Prisma's query compiler to load. The same condition as below.
 */
async function adminKeyStored(db: Pick<Database, 'queryDirect'>): Promise<boolean> {
  const rows = await db.queryDirect<{ found: number }>(
    'SELECT 1 AS found FROM "api_keys" WHERE "revoked_at" IS NULL AND $1 = ANY("scopes") LIMIT 1',
    [SCOPE.admin],
  );
  return rows.length > 0;
}

async function hasAdminKey(prisma: Pick<PrismaClient, 'apiKey'>): Promise<boolean> {
  const found = await prisma.apiKey.findFirst({
    where: { revokedAt: null, scopes: { has: SCOPE.admin } },
    select: { id: true },
  });
  return found !== null;
}

/**
 * docs/reference.md "Configuration", first start: when no unrevoked key with scope `admin` exists, creates one (no
 * client: admin calls carry no client id) and answers it, the only time it is ever visible.
 * Later starts answer null after one read, on the driver (adminKeyStored). The argon2 hash is computed before the transaction
 * so the lock is held only for a read and an insert.
 */
export async function ensureAdminKey(
  db: Pick<Database, 'prisma' | 'queryDirect'>,
  now: Date,
): Promise<FirstAdminKey> {
  if (await adminKeyStored(db)) return null;
  const { prisma } = db;
  const key = await keyRow({ clientId: null, name: 'admin (first start)', scopes: [SCOPE.admin] }, now);
  return prisma.$transaction(async (tx) => {
    // pg_advisory_xact_lock returns void, which the driver adapters cannot read: select around it.
    await tx.$queryRaw`SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(${ADMIN_KEY_LOCK})) AS l`;
    if (await hasAdminKey(tx)) return null;
    await tx.apiKey.create({ data: key.row, select: { id: true } });
    return { keyId: key.keyId, apiKey: key.apiKey };
  });
}
