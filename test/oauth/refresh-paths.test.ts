// The refresh's less travelled paths (issue 29): each test pins a behaviour that a mutation of
// server/oauth/refresh.ts showed no other test holds. Real parts throughout: the oidc-provider
// fixture, the server's own dependencies, PGlite and PostgreSQL.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIMITS } from '../../server/config.ts';
import { findGrant, type GrantKey, openTokens } from '../../server/oauth/grants.ts';
import { isOAuthApp, type OAuthApp } from '../../server/oauth/provider.ts';
import { refreshGrant } from '../../server/oauth/refresh.ts';
import { describeBackends } from '../support/db.ts';
import { freePort } from '../support/ports.ts';
import { call } from '../support/server.ts';
import { APP_ID, type Harness, redirectQuery, startHarness } from './harness.ts';

const INTO_REFRESH_WINDOW = 300_000 - LIMITS.refreshSkewMs;

async function connected(h: Harness, userId: string): Promise<void> {
  expect(redirectQuery(await h.connect(userId)).get('status')).toBe('success');
}

function keyOf(h: Harness, userId: string): GrantKey {
  return { clientId: h.agent.clientId, userId, appId: APP_ID };
}

async function demoApp(h: Harness): Promise<OAuthApp> {
  const app = await h.server.app.deps.apps.get(APP_ID);
  if (!app || !isOAuthApp(app)) throw new Error('demo is not an oauth2 app');
  return app;
}

/** The access token stored for a user's grant, as the server would open it. */
async function storedToken(h: Harness, userId: string): Promise<string> {
  const { deps } = h.server.app;
  const row = await findGrant(deps.db.prisma, keyOf(h, userId));
  if (!row) throw new Error(`no grant for ${userId}`);
  return (await openTokens(deps.envelope, keyOf(h, userId), row.credential)).access_token;
}

const REAUTH_BODY = {
  ok: false,
  error: 'auth_required',
  message: expect.any(String),
  auth_endpoint: '/initiateOAuth',
  app_id: APP_ID,
  reauth_required: true,
};

/** toolgate_oauth_refreshes_total of the demo app for `outcome` (0 before the first). */
async function refreshesCounted(h: Harness, outcome: 'ok' | 'reauth_required' | 'failed'): Promise<number> {
  const text = (await call(h.server.url, 'GET', '/metrics')).text;
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`toolgate_oauth_refreshes_total{app="${APP_ID}",outcome="${outcome}"} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

/** The audit trail's `connection.reauth_required` events of one user's grant. */
async function reauthEvents(h: Harness, userId: string): Promise<unknown[]> {
  const reply = await call(h.server.url, 'GET', '/admin/audit?action=connection.reauth_required', {
    key: h.server.adminKey,
  });
  expect(reply.status).toBe(200);
  return (reply.body.events as Array<{ details: { userId: string } }>).filter(
    (event) => event.details.userId === userId,
  );
}

/** The server's log lines with this message, parsed. */
function logged(h: Harness, msg: string): Array<Record<string, unknown>> {
  return h.server.logs
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .filter((line) => line.msg === msg);
}

describeBackends('end-user OAuth: the refresh’s other paths', (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend.name, { env: { UPSTREAM_TIMEOUT_MS: '5000' } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('refreshes two users’ grants at the same time each with its own token', async () => {
    await connected(h, 'twin-a');
    await connected(h, 'twin-b');
    const seen = [await storedToken(h, 'twin-a'), await storedToken(h, 'twin-b')];
    h.clock.advance(INTO_REFRESH_WINDOW);
    const refreshes = h.provider.counts.refresh_token;
    const app = await demoApp(h);
    h.provider.delayTokenEndpoint(100); // both in flight at once
    let outcomes: Awaited<ReturnType<typeof refreshGrant>>[];
    try {
      outcomes = await Promise.all([
        refreshGrant(h.server.app.deps, app, keyOf(h, 'twin-a'), seen[0] as string),
        refreshGrant(h.server.app.deps, app, keyOf(h, 'twin-b'), seen[1] as string),
      ]);
    } finally {
      h.provider.delayTokenEndpoint(0);
    }
    expect(h.provider.counts.refresh_token).toBe(refreshes + 2);
    const tokens = outcomes.map((outcome) => (outcome.ok ? outcome.value.accessToken : outcome.error.kind));
    expect(await Promise.all(tokens.map((token) => h.provider.accountOf(token)))).toEqual([
      'twin-a',
      'twin-b',
    ]);
  });

  it.each(['invalid_client', 'unauthorized_client'])(
    'marks the grant reauth_required when the token endpoint answers %s',
    async (code) => {
      const user = `refused-${code}`;
      await connected(h, user);
      h.clock.advance(INTO_REFRESH_WINDOW);
      const [reauths, failures] = [
        await refreshesCounted(h, 'reauth_required'),
        await refreshesCounted(h, 'failed'),
      ];
      h.provider.failTokenEndpoint(1, 400, code);
      const reply = await h.proxy(user);
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual(REAUTH_BODY);
      expect((await h.connections(user)).body.connections[0].status).toBe('reauth_required');
      // The operator sees why: the audit trail names the provider's code, /metrics counts it.
      expect(await reauthEvents(h, user)).toEqual([
        expect.objectContaining({
          actor: 'system',
          details: { clientId: h.agent.clientId, userId: user, appId: APP_ID, reason: code },
        }),
      ]);
      expect(await refreshesCounted(h, 'reauth_required')).toBe(reauths + 1);
      expect(await refreshesCounted(h, 'failed')).toBe(failures);
    },
  );

  it('keeps the grant when the token endpoint answers another OAuth error (502), and refreshes next time', async () => {
    await connected(h, 'scoped-out');
    h.clock.advance(INTO_REFRESH_WINDOW);
    const [reauths, failures] = [
      await refreshesCounted(h, 'reauth_required'),
      await refreshesCounted(h, 'failed'),
    ];
    h.provider.failTokenEndpoint(1, 400, 'invalid_scope');
    const reply = await h.proxy('scoped-out');
    expect(reply.status).toBe(502);
    expect(reply.body).toEqual({
      ok: false,
      error: 'upstream_error',
      message: 'The token endpoint answered 400 to a refresh.',
      upstream_status: 400,
      upstream_body: JSON.stringify({ error: 'invalid_scope', note: 'injected by the test' }),
    });
    expect((await h.connections('scoped-out')).body.connections[0].status).toBe('active');
    expect(await reauthEvents(h, 'scoped-out')).toEqual([]);
    expect(await refreshesCounted(h, 'failed')).toBe(failures + 1);
    expect(await refreshesCounted(h, 'reauth_required')).toBe(reauths);
    // The log line says what failed, with the provider's code and status (never a token).
    expect(logged(h, 'oauth refresh failed').at(-1)).toMatchObject({
      level: 40, // warn
      appId: APP_ID,
      clientId: h.agent.clientId,
      failure: 'oauth_error',
      oauthError: 'invalid_scope',
      status: 400,
    });
    const oks = await refreshesCounted(h, 'ok');
    expect((await h.proxy('scoped-out')).status).toBe(200);
    expect(await refreshesCounted(h, 'ok')).toBe(oks + 1);
  });

  it('takes the scopes of the refresh answer', async () => {
    await connected(h, 'rescoped');
    const granted = (await h.connections('rescoped')).body.connections[0].scopes as string[];
    expect(granted.length).toBeGreaterThan(0);
    // What the grant says now differs from what the provider will answer.
    await h.server.app.deps.db.prisma.connection.updateMany({
      where: { clientId: h.agent.clientId, userId: 'rescoped', appId: APP_ID },
      data: { scopes: [...granted, 'stale:scope'] },
    });
    h.clock.advance(INTO_REFRESH_WINDOW);
    const refreshes = h.provider.counts.refresh_token;
    expect((await h.proxy('rescoped')).status).toBe(200);
    expect(h.provider.counts.refresh_token).toBe(refreshes + 1);
    expect((await h.connections('rescoped')).body.connections[0].scopes).toEqual(granted);
  });

  it('keeps the grant’s scopes when the refresh answer leaves them out', async () => {
    await connected(h, 'same-scope');
    const granted = (await h.connections('same-scope')).body.connections[0].scopes as string[];
    expect(granted.length).toBeGreaterThan(0);
    h.provider.omitScopeFromRefreshes(true);
    try {
      h.clock.advance(INTO_REFRESH_WINDOW);
      const refreshes = h.provider.counts.refresh_token;
      expect((await h.proxy('same-scope')).status).toBe(200);
      expect(h.provider.counts.refresh_token).toBe(refreshes + 1);
    } finally {
      h.provider.omitScopeFromRefreshes(false);
    }
    // RFC 6749 §5.1: no `scope` in the answer means the scope granted before.
    expect((await h.connections('same-scope')).body.connections[0].scopes).toEqual(granted);
  });

  it('logs why the token endpoint could not be reached', async () => {
    await connected(h, 'unreachable-log');
    await h.registerApp({ tokenUrl: `http://127.0.0.1:${await freePort()}/token` });
    try {
      h.clock.advance(INTO_REFRESH_WINDOW);
      expect((await h.proxy('unreachable-log')).status).toBe(502);
    } finally {
      await h.registerApp();
    }
    const line = logged(h, 'oauth refresh failed').at(-1);
    expect(line).toMatchObject({
      level: 40, // warn
      appId: APP_ID,
      clientId: h.agent.clientId,
      failure: 'unreachable',
      cause: 'ECONNREFUSED',
    });
    expect(line).not.toHaveProperty('status');
    expect(line).not.toHaveProperty('oauthError');
  });

  it('uses the token someone else stored meanwhile instead of asking the provider', async () => {
    await connected(h, 'latecomer');
    const current = await storedToken(h, 'latecomer');
    const refreshes = h.provider.counts.refresh_token;
    // The caller saw an older token; the stored one is fresh: it is the answer, at no cost.
    const outcome = await refreshGrant(
      h.server.app.deps,
      await demoApp(h),
      keyOf(h, 'latecomer'),
      'an-older-access-token',
    );
    expect(outcome).toEqual({ ok: true, value: { accessToken: current, scopes: expect.any(Array) } });
    expect(h.provider.counts.refresh_token).toBe(refreshes);
  });

  it('answers auth_required for a grant deleted and reauth_required for one deactivated before the lock', async () => {
    const app = await demoApp(h);
    const refreshes = h.provider.counts.refresh_token;
    expect(await refreshGrant(h.server.app.deps, app, keyOf(h, 'never-connected'), 'x')).toEqual({
      ok: false,
      error: { kind: 'auth_required' },
    });
    await connected(h, 'deactivated');
    const seen = await storedToken(h, 'deactivated');
    await h.server.app.deps.db.prisma.connection.updateMany({
      where: { clientId: h.agent.clientId, userId: 'deactivated', appId: APP_ID },
      data: { status: 'reauth_required' },
    });
    h.clock.advance(INTO_REFRESH_WINDOW);
    expect(await refreshGrant(h.server.app.deps, app, keyOf(h, 'deactivated'), seen)).toEqual({
      ok: false,
      error: { kind: 'reauth_required' },
    });
    expect(h.provider.counts.refresh_token).toBe(refreshes);
  });
});
