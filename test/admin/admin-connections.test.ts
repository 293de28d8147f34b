import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Harness, redirectQuery, startHarness } from '../oauth/harness.ts';
import { describeBackends } from '../support/db.ts';
import { call } from '../support/server.ts';

/**
 * GET /admin/connections and DELETE /admin/connections: end users' grants of every client for an
 * administrator (the web console's "connections by user"), made by real OAuth flows against a real
 * provider, listed in (client, user, app) order with filters and a cursor, and forgotten exactly
 * as the agent's DELETE /connections/{appId} forgets them (revoked at the provider).
 */

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describeBackends('admin connections', (backend) => {
  let h: Harness;
  const admin = (method: string, path: string) =>
    call(h.server.url, method, path, { key: h.server.adminKey });
  beforeAll(async () => {
    h = await startHarness(backend.name);
    await h.registerApp({}, 'second');
    for (const [userId, appId] of [
      ['ada', 'demo'],
      ['ada', 'second'],
      ['grace', 'demo'],
    ] as const) {
      expect(redirectQuery(await h.connect(userId, { appId })).get('status')).toBe('success');
    }
  });
  afterAll(async () => {
    await h?.close();
  });

  const row = (userId: string, appId: string) => ({
    clientId: h.agent.clientId,
    userId,
    appId,
    status: 'active',
    scopes: ['profile:read'],
    expiresAt: expect.stringMatching(ISO),
    updatedAt: expect.stringMatching(ISO),
  });

  it('lists every grant in (client, user, app) order, filtered, paged, never a token', async () => {
    const all = await admin('GET', '/admin/connections');
    expect([all.status, all.body]).toEqual([
      200,
      { connections: [row('ada', 'demo'), row('ada', 'second'), row('grace', 'demo')] },
    ]);
    expect(all.text).not.toMatch(/access_token|refresh_token|credential/);
    const ada = await admin('GET', `/admin/connections?userId=ada&clientId=${h.agent.clientId}`);
    expect(ada.body).toEqual({ connections: [row('ada', 'demo'), row('ada', 'second')] });
    const demo = await admin('GET', '/admin/connections?appId=demo');
    expect(demo.body).toEqual({ connections: [row('ada', 'demo'), row('grace', 'demo')] });

    const first = await admin('GET', '/admin/connections?limit=2');
    expect(first.body).toEqual({
      connections: [row('ada', 'demo'), row('ada', 'second')],
      next_cursor: expect.any(String),
    });
    const second = await admin('GET', `/admin/connections?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body).toEqual({ connections: [row('grace', 'demo')] });
    const bad = await admin('GET', '/admin/connections?cursor=WyJ4Il0');
    expect([bad.status, bad.body.error, bad.body.issues]).toEqual([
      400,
      'invalid_request',
      [{ path: '/cursor', message: 'Must be the next_cursor of a previous page.' }],
    ]);
  });

  it("forgets one user's grant as the agent's DELETE does, and answers not_found after", async () => {
    const path = `/admin/connections?clientId=${h.agent.clientId}&userId=grace&appId=demo`;
    const removed = await admin('DELETE', path);
    expect([removed.status, removed.body]).toEqual([200, { ok: true }]);
    // The agent sees it gone, and the provider was told.
    expect((await h.connections('grace')).body).toEqual({ connections: [] });
    const again = await admin('DELETE', path);
    expect([again.status, again.body]).toEqual([
      404,
      { ok: false, error: 'not_found', message: 'This user has no connection to this app.' },
    ]);
    const missing = await admin('DELETE', `/admin/connections?clientId=${h.agent.clientId}&userId=grace`);
    expect([missing.status, missing.body.error, missing.body.issues[0].path]).toEqual([
      400,
      'invalid_request',
      '/appId',
    ]);
  });

  it('needs the admin scope', async () => {
    const denied = await call(h.server.url, 'GET', '/admin/connections', { key: h.agent.apiKey });
    expect([denied.status, denied.body.error, denied.body.scope]).toEqual([403, 'rbac_denied', 'admin']);
  });
});
