import type { PrismaClient } from '../db/generated/client.ts';
import { newId } from '../ids.ts';

const clientSelect = { id: true, name: true, createdAt: true } as const;

export interface ClientView {
  clientId: string;
  name: string;
  createdAt: string;
}

function view(row: { id: string; name: string; createdAt: Date }): ClientView {
  return { clientId: row.id, name: row.name, createdAt: row.createdAt.toISOString() };
}

export async function createClient(prisma: PrismaClient, name: string, now: Date): Promise<ClientView> {
  const row = await prisma.client.create({
    data: { id: newId('client'), name, createdAt: now },
    select: clientSelect,
  });
  return view(row);
}

export async function listClients(prisma: PrismaClient): Promise<ClientView[]> {
  const rows = await prisma.client.findMany({
    select: clientSelect,
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return rows.map(view);
}

export async function clientExists(prisma: PrismaClient, clientId: string): Promise<boolean> {
  return (await prisma.client.findUnique({ where: { id: clientId }, select: { id: true } })) !== null;
}
