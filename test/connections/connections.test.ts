import { afterAll, beforeAll, expect, it } from 'vitest';
import { APP_ID, type Harness, redirectQuery, startHarness } from '../oauth/harness.ts';
import { describeBackends } from '../support/db.ts';
import { freePort } from '../support/ports.ts';
import { call } from '../support/server.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function connected(h: Harness, userId: string, appId?: string): Promise<void> {
  expect(redirectQuery(await h.connect(userId, { appId })).get('status')).toBe('success');
}

describeBackends('connections: list and disconnect', (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend.name);
    await h.registerApp({}, 'second');
    await h.registerApp({ revocationUrl: undefined }, 'norevoke');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('lists nothing for a user without grants', async () => {
    const reply = await h.connections('nobody');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ connections: [] });
  });

  it("lists the user's grants in app order, filtered by appId, without tokens", async () => {
    await connected(h, 'lister', 'second');
    await connected(h, 'lister');
    const reply = await h.connections('lister');
    expect(reply.status).toBe(200);
    const row = (appId: string) => ({
      appId,
      status: 'active',
      scopes: ['profile:read'],
      expiresAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    expect(reply.body).toEqual({ connections: [row(APP_ID), row('second')] });
    expect(Date.parse(reply.body.connections[0].expiresAt)).toBe(
      Date.parse(reply.body.connections[0].updatedAt) + 300_000,
    );
    const filtered = await h.connections('lister', { query: '?appId=second' });
    expect(filtered.body).toEqual({ connections: [row('second')] });
    for (const secret of h.provider.secrets()) expect(reply.text.includes(secret)).toBe(false);
  });

  it('answers 400 invalid_request for a malformed appId filter', async () => {
    const reply = await h.connections('lister', { query: '?appId=not%20an%20id' });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ error: 'invalid_request', issues: [{ path: '/appId' }] });
  });

  it('requires X-Service-User-Id (400) and the connections scopes (403)', async () => {
    for (const [method, path] of [
      ['GET', '/connections'],
      ['DELETE', `/connections/${APP_ID}`],
    ] as const) {
      const reply = await call(h.server.url, method, path, {
        key: h.agent.apiKey,
        clientId: h.agent.clientId,
      });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({
        ok: false,
        error: 'invalid_request',
        message: expect.any(String),
        issues: [{ path: '', message: expect.stringContaining('X-Service-User-Id') }],
      });
    }
    const readOnly = await h.newAgent(['connections:read']);
    const writeOnly = await h.newAgent(['connections:write']);
    const list = await h.connections('lister', { agent: writeOnly });
    expect(list.status).toBe(403);
    expect(list.body).toEqual({
      ok: false,
      error: 'rbac_denied',
      message: expect.any(String),
      reason: 'scope_missing',
      scope: 'connections:read',
    });
    const remove = await h.disconnect('lister', { agent: readOnly });
    expect(remove.status).toBe(403);
    expect(remove.body).toMatchObject({
      error: 'rbac_denied',
      reason: 'scope_missing',
      scope: 'connections:write',
    });
    expect((await h.connections('lister', { agent: readOnly })).status).toBe(200);
  });

  it('answers 401 before anything else without a valid key', async () => {
    const reply = await call(h.server.url, 'GET', '/connections', { headers: { 'x-service-user-id': 'u' } });
    expect([reply.status, reply.body.error]).toEqual([401, 'invalid_api_key']);
  });

  it('answers 404 not_found when there is no grant to forget', async () => {
    for (const appId of [APP_ID, 'never-registered']) {
      const reply = await h.disconnect('nobody', { appId });
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({ ok: false, error: 'not_found', message: expect.any(String) });
    }
  });

  it('revokes the grant at the provider and forgets it; /proxyV2 then asks for authorization', async () => {
    await connected(h, 'leaver');
    expect((await h.proxy('leaver')).status).toBe(200);
    const token = (h.upstream.requests.at(-1)?.headers.authorization ?? '').slice('Bearer '.length);
    expect(await h.provider.isAccessTokenValid(token)).toBe(true);
    const revocations = h.provider.counts.revocation;

    const reply = await h.disconnect('leaver');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ok: true });
    expect(h.provider.counts.revocation).toBeGreaterThan(revocations);
    expect(await h.provider.isAccessTokenValid(token)).toBe(false);
    expect((await h.connections('leaver')).body).toEqual({ connections: [] });
    const after = await h.proxy('leaver');
    expect(after.status).toBe(401);
    expect(after.body).toEqual({
      ok: false,
      error: 'auth_required',
      message: expect.any(String),
      auth_endpoint: '/initiateOAuth',
      app_id: APP_ID,
    });
    expect((await h.disconnect('leaver')).status).toBe(404);
  });

  it('forgets a grant without calling the provider when the app has no revocation endpoint', async () => {
    await connected(h, 'quiet', 'norevoke');
    const revocations = h.provider.counts.revocation;
    expect((await h.disconnect('quiet', { appId: 'norevoke' })).status).toBe(200);
    expect(h.provider.counts.revocation).toBe(revocations);
    expect((await h.connections('quiet')).body.connections).toEqual([]);
  });

  it('forgets the grant even when the revocation endpoint cannot be reached', async () => {
    const port = await freePort();
    await h.registerApp({ revocationUrl: `http://127.0.0.1:${port}/revoke` }, 'deadrevoke');
    await connected(h, 'stubborn', 'deadrevoke');
    const reply = await h.disconnect('stubborn', { appId: 'deadrevoke' });
    expect([reply.status, reply.body]).toEqual([200, { ok: true }]);
    expect((await h.connections('stubborn')).body.connections).toEqual([]);
    expect(h.server.logs.join('')).toContain('oauth revocation failed');
  });

  it("never touches another client's or another user's grant", async () => {
    await connected(h, 'owner');
    const other = await h.newAgent();
    expect((await h.disconnect('owner', { agent: other })).status).toBe(404);
    expect((await h.disconnect('Owner')).status).toBe(404);
    expect((await h.connections('owner')).body.connections).toHaveLength(1);
    expect((await h.proxy('owner')).status).toBe(200);
  });

  it('answers 405 for a wrong method on a connections path', async () => {
    const reply = await call(h.server.url, 'GET', `/connections/${APP_ID}`, {
      key: h.agent.apiKey,
      clientId: h.agent.clientId,
    });
    expect([reply.status, reply.body.error, reply.headers.get('allow')]).toEqual([
      405,
      'method_not_allowed',
      'DELETE',
    ]);
  });
});
