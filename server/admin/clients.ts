import type { ClientView } from '../../shared/schemas/admin.ts';
import type { Prisma, PrismaClient } from '../db/generated/client.ts';
import { newId } from '../ids.ts';
import { ok, type Result } from '../result.ts';

const clientSelect = { id: true, name: true, createdAt: true } as const;

function view(row: { id: string; name: string; createdAt: Date }): ClientView {
  return { clientId: row.id, name: row.name, createdAt: row.createdAt.toISOString() };
}

/** Within a transaction of the caller's (the change and its audit event commit together). */
export async function createClient(
  tx: Prisma.TransactionClient,
  name: string,
  now: Date,
): Promise<Result<ClientView, never>> {
  const row = await tx.client.create({
    data: { id: newId('client'), name, createdAt: now },
    select: clientSelect,
  });
  return ok(view(row));
}

export async function listClients(prisma: PrismaClient): Promise<ClientView[]> {
  const rows = await prisma.client.findMany({
    select: clientSelect,
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return rows.map(view);
}

export async function clientExists(prisma: Prisma.TransactionClient, clientId: string): Promise<boolean> {
  return (await prisma.client.findUnique({ where: { id: clientId }, select: { id: true } })) !== null;
}
