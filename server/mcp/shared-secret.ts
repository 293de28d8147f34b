import { randomBytes } from 'node:crypto';
import type { Envelope } from '../crypto/envelope.ts';
import type { PrismaClient } from '../db/generated/client.ts';

/**
 * A secret every server of a cluster holds alike, without configuration: made once by whichever
 * server needs it first, stored sealed by the KMS (`server_secrets`), read back by the others.
 * Two servers racing to make it both insert-if-absent and then read the one row that won.
 */
export async function sharedSecret(prisma: PrismaClient, envelope: Envelope, name: string): Promise<Buffer> {
  const context = `server-secret:${name}`;
  const read = () => prisma.serverSecret.findUnique({ where: { name }, select: { sealed: true } });
  let row = await read();
  if (!row) {
    const sealed = await envelope.seal(randomBytes(32).toString('base64'), context);
    await prisma.serverSecret.createMany({
      data: [{ name, sealed: new Uint8Array(sealed), createdAt: new Date() }],
      skipDuplicates: true,
    });
    row = await read();
    if (!row) throw new Error(`server secret ${name} could not be stored`);
  }
  return Buffer.from(await envelope.openString(Buffer.from(row.sealed), context), 'base64');
}
