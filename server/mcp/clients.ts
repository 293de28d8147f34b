import type { PrismaClient } from '../db/generated/client.ts';

/**
 * What a 2025-era client declared at `initialize`. Stateless serving sees no session, so a later
 * `tools/call` cannot see the client's capabilities; the server remembers, per API key and end
 * user, whether the last client to initialize takes URL elicitations. Only a hint: without it the
 * call answers the tool error with `authorization_url`, which every client can show.
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
