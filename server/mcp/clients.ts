import { LIMITS } from '../config.ts';
import type { PrismaClient } from '../db/generated/client.ts';

/**
 * What a 2025-era client declared at `initialize`. Stateless serving sees no session, so a later
 * `tools/call` cannot see the client's capabilities; the server remembers, per API key and end
 * user, whether the last client to initialize takes URL elicitations. Only a hint: without it the
 * call answers the tool error with `authorization_url`, which every client can show. So the memory
 * is bounded: per API key, the LIMITS.mcpClientsPerKey users that initialized last (a key may name
 * any number of users, one row each).
 */
export async function rememberInitialize(
  prisma: PrismaClient,
  keyId: string,
  userId: string | undefined,
  capabilities: unknown,
  now: Date,
): Promise<void> {
  const elicitation = (capabilities as { elicitation?: { url?: unknown } } | undefined)?.elicitation;
  const urlElicitation =
    elicitation !== null && typeof elicitation === 'object' && elicitation.url !== undefined;
  const where = { apiKeyId_userId: { apiKeyId: keyId, userId: userId ?? '' } };
  const upsert = () =>
    prisma.mcpClient.upsert({
      where,
      create: { apiKeyId: keyId, userId: userId ?? '', urlElicitation, updatedAt: now },
      update: { urlElicitation, updatedAt: now },
      select: { apiKeyId: true },
    });
  try {
    await upsert();
  } catch (error) {
    // Two clients initializing at once: the loser's insert conflicts; it updates instead.
    if ((error as { code?: string }).code !== 'P2002') throw error;
    await upsert();
  }
  await forgetLeastRecent(prisma, keyId, userId ?? '');
}

/**
 * Past LIMITS.mcpClientsPerKey rows of the key, the least recently initialized go (never the one
 * just written). Run after the write committed, so the last of concurrent writers, on any server,
 * sees every row.
 */
async function forgetLeastRecent(prisma: PrismaClient, keyId: string, justWritten: string): Promise<void> {
  // The others beyond the newest (limit − 1): with the one just written, `limit` stay.
  const beyond = await prisma.mcpClient.findMany({
    where: { apiKeyId: keyId, userId: { not: justWritten } },
    orderBy: [{ updatedAt: 'desc' }, { userId: 'desc' }],
    skip: LIMITS.mcpClientsPerKey - 1,
    select: { userId: true },
  });
  if (beyond.length === 0) return;
  await prisma.mcpClient.deleteMany({
    where: { apiKeyId: keyId, userId: { in: beyond.map((row) => row.userId) } },
  });
}

export async function takesUrlElicitation(
  prisma: PrismaClient,
  keyId: string,
  userId: string | undefined,
): Promise<boolean> {
  const row = await prisma.mcpClient.findUnique({
    where: { apiKeyId_userId: { apiKeyId: keyId, userId: userId ?? '' } },
    select: { urlElicitation: true },
  });
  return row?.urlElicitation === true;
}
