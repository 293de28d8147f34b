import type { PrismaClient } from '../db/generated/client.ts';
import { turn } from '../db/turn.ts';

/**
 * Writes an app's large texts (packed: GitHub's document is 0.9 MB of it), one statement each, the
 * event loop turning before each (server/db/turn.ts): in one statement with the rest of the row
 * they held every other request for 0.2–0.4 s on the embedded database. Plain SQL: through
 * Prisma's query compiler a large parameter took about as long again as the database's own write.
 */
export async function writeAppTexts(
  tx: Pick<PrismaClient, '$executeRaw'>,
  appId: string,
  texts: { openapi?: string; catalog: string; search: string },
): Promise<void> {
  await turn();
  await tx.$executeRaw`UPDATE apps SET catalog = ${texts.catalog} WHERE id = ${appId}`;
  await turn();
  await tx.$executeRaw`UPDATE apps SET search = ${texts.search} WHERE id = ${appId}`;
  if (texts.openapi === undefined) return;
  await turn();
  await tx.$executeRaw`UPDATE apps SET openapi = ${texts.openapi} WHERE id = ${appId}`;
}
