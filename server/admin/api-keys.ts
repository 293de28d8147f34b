import { hashApiKey, newApiKey } from '../auth/api-keys.ts';
import { isKnownScope } from '../auth/scopes.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { clientExists } from './clients.ts';

export type CreateApiKeyOutcome =
  | { ok: true; keyId: string; apiKey: string; scopes: string[] }
  | { ok: false; error: 'client_not_found' }
  | { ok: false; error: 'unknown_scopes'; scopes: { index: number; scope: string }[] };

export async function createApiKey(
  prisma: PrismaClient,
  input: { clientId: string; name?: string | undefined; scopes: string[] },
  now: Date,
): Promise<CreateApiKeyOutcome> {
  const unknown = input.scopes
    .map((scope, index) => ({ index, scope }))
    .filter(({ scope }) => !isKnownScope(scope));
  if (unknown.length > 0) return { ok: false, error: 'unknown_scopes', scopes: unknown };
  if (!(await clientExists(prisma, input.clientId))) return { ok: false, error: 'client_not_found' };
  const scopes = [...new Set(input.scopes)];
  const key = newApiKey();
  await prisma.apiKey.create({
    data: {
      id: key.keyId,
      clientId: input.clientId,
      name: input.name ?? null,
      hash: await hashApiKey(key.apiKey),
      start: key.start,
      scopes,
      createdAt: now,
    },
    select: { id: true },
  });
  return { ok: true, keyId: key.keyId, apiKey: key.apiKey, scopes };
}

/** Revoking twice is fine (the first revocation time stays); an unknown key id is not. */
export async function revokeApiKey(prisma: PrismaClient, keyId: string, now: Date): Promise<boolean> {
  const { count } = await prisma.apiKey.updateMany({
    where: { id: keyId, revokedAt: null },
    data: { revokedAt: now },
  });
  if (count > 0) return true;
  return (await prisma.apiKey.findUnique({ where: { id: keyId }, select: { id: true } })) !== null;
}
