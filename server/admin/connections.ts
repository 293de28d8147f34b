import type { AdminConnectionView, ListAdminConnectionsInput } from '../../shared/schemas/admin.ts';
import type { ConnectionStatus } from '../../shared/schemas/oauth.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { err, ok, type Result } from '../result.ts';

/**
 * Every client's users' grants, for an administrator (GET /admin/connections; the web console's
 * "connections by user"): filtered by client, user and app, ordered by (client, user, app) and
 * paged by a keyset cursor — the `(client_id, user_id, app_id)` unique index serves each page.
 * Never a token: the credential column is not read.
 */

const select = {
  clientId: true,
  userId: true,
  appId: true,
  status: true,
  scopes: true,
  expiresAt: true,
  updatedAt: true,
} as const;

type Position = [clientId: string, userId: string, appId: string];

function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

function decodeCursor(cursor: string): Position | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    const valid =
      Array.isArray(value) && value.length === 3 && value.every((part) => typeof part === 'string');
    // Only the exact text this server writes: no second spelling of one position.
    return valid && encodeCursor(value as Position) === cursor ? (value as Position) : null;
  } catch {
    return null;
  }
}

export async function listAllConnections(
  prisma: PrismaClient,
  input: ListAdminConnectionsInput,
): Promise<Result<{ connections: AdminConnectionView[]; next_cursor?: string }, 'bad_cursor'>> {
  const after = input.cursor === undefined ? null : decodeCursor(input.cursor);
  if (input.cursor !== undefined && after === null) return err('bad_cursor');
  const filter = {
    ...(input.clientId !== undefined ? { clientId: input.clientId } : {}),
    ...(input.userId !== undefined ? { userId: input.userId } : {}),
    ...(input.appId !== undefined ? { appId: input.appId } : {}),
  };
  const keyset = after
    ? {
        OR: [
          { clientId: { gt: after[0] } },
          { clientId: after[0], userId: { gt: after[1] } },
          { clientId: after[0], userId: after[1], appId: { gt: after[2] } },
        ],
      }
    : {};
  const rows = await prisma.connection.findMany({
    where: { AND: [filter, keyset] },
    select,
    orderBy: [{ clientId: 'asc' }, { userId: 'asc' }, { appId: 'asc' }],
    take: input.limit + 1,
  });
  const page = rows.slice(0, input.limit);
  const connections = page.map((row) => ({
    clientId: row.clientId,
    userId: row.userId,
    appId: row.appId,
    status: row.status as ConnectionStatus,
    scopes: row.scopes,
    expiresAt: row.expiresAt?.toISOString() ?? null,
    updatedAt: row.updatedAt.toISOString(),
  }));
  const last = page[page.length - 1];
  return ok(
    rows.length > input.limit && last
      ? { connections, next_cursor: encodeCursor([last.clientId, last.userId, last.appId]) }
      : { connections },
  );
}
