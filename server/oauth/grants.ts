import type { Clock } from '../clock.ts';
import { LIMITS } from '../config.ts';
import type { Envelope } from '../crypto/envelope.ts';
import type { Prisma, PrismaClient } from '../db/generated/client.ts';
import { newId } from '../ids.ts';
import { appendAuditIn } from '../observe/audit.ts';
import { writingGrants } from './grant-writes.ts';

/**
 * End-user grants: one `connections` row per (client, user, app). The token set is sealed with
 * envelope encryption bound to that triple; status, scopes and expiry are plain metadata, so
 * listing and freshness checks never open a secret.
 */

/** Who a grant belongs to. Grants never cross clients or users: every lookup names all three. */
export interface GrantKey {
  clientId: string;
  userId: string;
  appId: string;
}

/** The sealed part of a grant. */
export interface TokenSet {
  access_token: string;
  refresh_token?: string;
}

export type GrantStatus = 'active' | 'reauth_required';

/** A client or a transaction: grant helpers run in both. */
export type Db = PrismaClient | Prisma.TransactionClient;

const grantSelect = {
  id: true,
  status: true,
  scopes: true,
  expiresAt: true,
  credential: true,
  updatedAt: true,
} satisfies Prisma.ConnectionSelect;

export type GrantRow = Prisma.ConnectionGetPayload<{ select: typeof grantSelect }>;

/**
 * The envelope context of a grant: a blob copied to another (client, user, app) does not open.
 * Client ids and app ids hold no `:`, so the user id in the middle is unambiguous.
 */
export function connectionContext(clientId: string, userId: string, appId: string): string {
  return `connection:${clientId}:${userId}:${appId}`;
}

const contextOf = (key: GrantKey) => connectionContext(key.clientId, key.userId, key.appId);

const whereKey = (key: GrantKey) => ({ clientId_userId_appId: key });

export function findGrant(db: Db, key: GrantKey): Promise<GrantRow | null> {
  return db.connection.findUnique({ where: whereKey(key), select: grantSelect });
}

/**
 * Takes the grant's row lock until the transaction ends: the one place where refreshes (and a
 * disconnect) of the same grant queue up, across every process on the database.
 */
export async function lockGrant(tx: Prisma.TransactionClient, key: GrantKey): Promise<void> {
  await tx.$queryRaw`SELECT id FROM connections WHERE client_id = ${key.clientId} AND user_id = ${key.userId} AND app_id = ${key.appId} FOR UPDATE`;
}

export async function openTokens(
  envelope: Envelope,
  key: GrantKey,
  credential: Uint8Array,
): Promise<TokenSet> {
  return JSON.parse(await envelope.openString(credential, contextOf(key))) as TokenSet;
}

async function sealTokens(
  envelope: Envelope,
  key: GrantKey,
  tokens: TokenSet,
): Promise<Uint8Array<ArrayBuffer>> {
  const set: TokenSet = { access_token: tokens.access_token };
  if (tokens.refresh_token) set.refresh_token = tokens.refresh_token;
  return new Uint8Array(await envelope.seal(JSON.stringify(set), contextOf(key)));
}

/** `expires_in` seconds from `now` (the injected clock), or null when the provider gave none. */
export function expiryFrom(expiresIn: number | undefined, now: number): Date | null {
  return typeof expiresIn === 'number' && Number.isFinite(expiresIn)
    ? new Date(now + expiresIn * 1000)
    : null;
}

/** An access token that expires within LIMITS.refreshSkewMs is refreshed before use. */
export function expiresSoon(expiresAt: Date | null, now: number): boolean {
  return expiresAt !== null && expiresAt.getTime() - now <= LIMITS.refreshSkewMs;
}

export interface NewTokens {
  tokens: TokenSet;
  scopes: string[];
  expiresAt: Date | null;
}

/**
 * Stores the grant of a finished authorization, replacing any earlier grant of the same triple;
 * answers the connection's id.
 */
export async function saveGrant(
  db: PrismaClient,
  envelope: Envelope,
  key: GrantKey,
  grant: NewTokens,
  now: Date,
): Promise<string> {
  const data = await activeGrantData(envelope, key, grant, now);
  const upsert = () =>
    db.connection.upsert({
      where: whereKey(key),
      create: { id: newId('connection'), ...key, ...data, createdAt: now },
      update: data,
      select: { id: true },
    });
  const saved = await writingGrants(async () => {
    try {
      return await upsert();
    } catch (error) {
      // Two callbacks of one triple racing to create: the loser's insert conflicts; it replaces instead.
      if ((error as { code?: string }).code !== 'P2002') throw error;
      return upsert();
    }
  });
  return saved.id;
}

/**
 * The audit event of a connection change (docs/reference.md "Audit trail"): the connection's id as
 * the target, its triple as details, never a token; within the transaction of the change.
 */
export function auditConnection(
  tx: Prisma.TransactionClient,
  clock: Clock,
  actor: string,
  action: 'connection.granted' | 'connection.reauth_required' | 'connection.deleted',
  id: string,
  key: GrantKey,
  extra: Record<string, unknown> = {},
): Promise<void> {
  return appendAuditIn(tx, clock, {
    actor,
    action,
    target: id,
    details: { clientId: key.clientId, userId: key.userId, appId: key.appId, ...extra },
  });
}

/** The columns of an active grant holding `grant`'s tokens, sealed. */
async function activeGrantData(envelope: Envelope, key: GrantKey, grant: NewTokens, now: Date) {
  return {
    status: 'active' satisfies GrantStatus,
    scopes: grant.scopes,
    expiresAt: grant.expiresAt,
    credential: await sealTokens(envelope, key, grant.tokens),
    updatedAt: now,
  };
}

/**
 * Writes a refresh's answer in one UPDATE: the new access token, and the new refresh token when
 * the provider rotated it (else the old one is kept).
 */
export async function saveRefreshedTokens(
  db: Db,
  envelope: Envelope,
  key: GrantKey,
  id: string,
  grant: NewTokens,
  now: Date,
): Promise<void> {
  const data = await activeGrantData(envelope, key, grant, now);
  await writingGrants(() => db.connection.update({ where: { id }, data, select: { id: true } }));
}

/**
 * The same write on any connection, but only if the grant still holds `version.credential` (what
 * the refresh read: every seal is unique, so it names one version). false when it does not.
 */
export async function saveRefreshedTokensIf(
  db: Db,
  envelope: Envelope,
  key: GrantKey,
  version: { id: string; credential: Uint8Array },
  grant: NewTokens,
  now: Date,
): Promise<boolean> {
  const data = await activeGrantData(envelope, key, grant, now);
  const { count } = await writingGrants(() =>
    db.connection.updateMany({
      where: { id: version.id, credential: { equals: new Uint8Array(version.credential) } },
      data,
    }),
  );
  return count === 1;
}

export async function markReauthRequired(db: Db, id: string, now: Date): Promise<void> {
  await writingGrants(() =>
    db.connection.update({
      where: { id },
      data: { status: 'reauth_required' satisfies GrantStatus, updatedAt: now },
      select: { id: true },
    }),
  );
}

export interface ConnectionListing {
  appId: string;
  status: string;
  scopes: string[];
  expiresAt: Date | null;
  updatedAt: Date;
}

/** A user's grants for one client (optionally one app), in app order; never a token. */
export function listGrants(
  db: PrismaClient,
  clientId: string,
  userId: string,
  appId?: string,
): Promise<ConnectionListing[]> {
  return db.connection.findMany({
    where: { clientId, userId, ...(appId ? { appId } : {}) },
    select: { appId: true, status: true, scopes: true, expiresAt: true, updatedAt: true },
    orderBy: { appId: 'asc' },
  });
}

export async function deleteGrant(db: Db, id: string): Promise<void> {
  await writingGrants(() => db.connection.deleteMany({ where: { id } }));
}
