import type { AppDeps } from '../deps.ts';
import { escapeHtml } from './page.ts';
import { SIGNIN_PATH } from './paths.ts';
import type { SessionCookies } from './session.ts';
import { userIdOf } from './session.ts';

/**
 * GET /me (docs/reference.md "MCP sign-in"): the signed-in person's connections, across every
 * client they signed in to, each with a "Disconnect" button that posts to /me/disconnect — the
 * same effect as DELETE /connections/{appId} for that client and user.
 */

export interface MeConnection {
  clientId: string;
  clientName: string;
  appId: string;
  status: string;
  updatedAt: Date;
}

export async function myConnections(deps: AppDeps, sub: string): Promise<MeConnection[]> {
  const { prisma } = deps.db;
  const rows = await prisma.connection.findMany({
    where: { userId: userIdOf(sub) },
    select: { clientId: true, appId: true, status: true, updatedAt: true },
    orderBy: [{ clientId: 'asc' }, { appId: 'asc' }],
  });
  const clients = await prisma.client.findMany({
    where: { id: { in: [...new Set(rows.map((row) => row.clientId))] } },
    select: { id: true, name: true },
  });
  const names = new Map(clients.map((client) => [client.id, client.name]));
  return rows.map((row) => ({ ...row, clientName: names.get(row.clientId) ?? row.clientId }));
}

/** What the disconnect form's anti-forgery value is bound to. */
export function disconnectSubject(clientId: string, appId: string): string {
  return `disconnect\n${clientId}\n${appId}`;
}

export async function mePage(
  sessions: SessionCookies,
  sub: string,
  connections: MeConnection[],
): Promise<string> {
  if (connections.length === 0) {
    return `<p>Signed in as <code>${escapeHtml(sub)}</code>. You have connected no app yet.</p>`;
  }
  const rows: string[] = [];
  for (const connection of connections) {
    const token = await sessions.formToken(sub, disconnectSubject(connection.clientId, connection.appId));
    rows.push(`<tr><td>${escapeHtml(connection.appId)}</td><td>${escapeHtml(connection.clientName)}</td><td>${escapeHtml(connection.status)}</td><td>
<form method="post" action="${SIGNIN_PATH.meDisconnect}">
<input type="hidden" name="client" value="${escapeHtml(connection.clientId)}">
<input type="hidden" name="app" value="${escapeHtml(connection.appId)}">
<input type="hidden" name="form_token" value="${escapeHtml(token)}">
<button name="disconnect" value="1">Disconnect</button>
</form></td></tr>`);
  }
  return `<p>Signed in as <code>${escapeHtml(sub)}</code>. The apps you connected:</p>
<table>
<tr><th>App</th><th>Through</th><th>Status</th><th></th></tr>
${rows.join('\n')}
</table>`;
}
