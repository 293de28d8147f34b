import type { Prisma, PrismaClient } from '../db/generated/client.ts';
import { err, ok, type Result } from '../result.ts';
import { clientExists } from './clients.ts';

export type RedirectUriOutcome<T> = Result<T, 'client_not_found' | 'uri_not_found'>;

/** Adding a URI twice is not an error: the registration is a set. */
export async function addRedirectUri(
  prisma: Prisma.TransactionClient,
  clientId: string,
  uri: string,
  now: Date,
): Promise<RedirectUriOutcome<{ clientId: string; uri: string }>> {
  if (!(await clientExists(prisma, clientId))) return err('client_not_found');
  await prisma.redirectUri.upsert({
    where: { clientId_uri: { clientId, uri } },
    create: { clientId, uri, createdAt: now },
    update: {},
    select: { uri: true },
  });
  return ok({ clientId, uri });
}

export async function listRedirectUris(
  prisma: PrismaClient,
  clientId: string,
): Promise<RedirectUriOutcome<string[]>> {
  if (!(await clientExists(prisma, clientId))) return err('client_not_found');
  const rows = await prisma.redirectUri.findMany({
    where: { clientId },
    select: { uri: true },
    orderBy: [{ createdAt: 'asc' }, { uri: 'asc' }],
  });
  return ok(rows.map((row) => row.uri));
}

export async function removeRedirectUri(
  prisma: Prisma.TransactionClient,
  clientId: string,
  uri: string,
): Promise<RedirectUriOutcome<true>> {
  if (!(await clientExists(prisma, clientId))) return err('client_not_found');
  const { count } = await prisma.redirectUri.deleteMany({ where: { clientId, uri } });
  return count === 0 ? err('uri_not_found') : ok(true);
}

/** Exact string match, as /initiateOAuth requires. */
export async function isRegisteredRedirectUri(
  prisma: PrismaClient,
  clientId: string,
  uri: string,
): Promise<boolean> {
  const row = await prisma.redirectUri.findUnique({
    where: { clientId_uri: { clientId, uri } },
    select: { uri: true },
  });
  return row !== null;
}
