import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { LIMITS } from '../../server/config.ts';
import { agentHeaders } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { freePort } from '../support/ports.ts';
import { call } from '../support/server.ts';
import { APP_ID, type Harness, redirectQuery, startHarness } from './harness.ts';

/** UPSTREAM_TIMEOUT_MS of these servers. */
const TIMEOUT_MS = 1_500;
/** The provider's access tokens live 300 s; this leaves them 60 s: inside the refresh window. */
const INTO_REFRESH_WINDOW = 300_000 - LIMITS.refreshSkewMs;

const bearerOf = (h: Harness) => h.upstream.requests.at(-1)?.headers.authorization;

async function connected(h: Harness, userId: string, appId?: string): Promise<void> {
  const done = await h.connect(userId, { appId });
  expect(redirectQuery(done).get('status')).toBe('success');
}

describeBackends('end-user OAuth: refresh', (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend.name, { env: { UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS) } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('uses the token as is while more than 60 s remain, refreshes within 60 s, and keeps the rotated refresh token', async () => {
    await connected(h, 'r1');
    const refreshes = h.provider.counts.refresh_token;
    h.clock.advance(INTO_REFRESH_WINDOW - 1);
    expect((await h.proxy('r1')).status).toBe(200);
    expect(h.provider.counts.refresh_token).toBe(refreshes);
    const original = bearerOf(h);
    const before = (await h.connections('r1')).body.connections[0];

    h.clock.advance(1);
    const refreshed = await h.proxy('r1');
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.data).toEqual({ id: 'user-1', name: 'Ada' });
    expect(h.provider.counts.refresh_token).toBe(refreshes + 1);
    expect(bearerOf(h)).not.toBe(original);
    const after = (await h.connections('r1')).body.connections[0];
    expect(after.status).toBe('active');
    expect(Date.parse(after.expiresAt)).toBe(h.clock.now() + 300_000);
    expect(after.expiresAt > before.expiresAt).toBe(true);

    // A second refresh works only if the rotated refresh token was stored: reusing the old one
    // would be invalid_grant (and the provider would revoke the whole grant).
    h.clock.advance(INTO_REFRESH_WINDOW);
    expect((await h.proxy('r1')).status).toBe(200);
    expect(h.provider.counts.refresh_token).toBe(refreshes + 2);
    expect((await h.connections('r1')).body.connections[0].status).toBe('active');
  });

  it('makes 20 concurrent calls on an expiring token cause exactly one refresh', async () => {
    await connected(h, 'crowd');
    h.clock.advance(INTO_REFRESH_WINDOW);
    const refreshes = h.provider.counts.refresh_token;
    h.provider.delayTokenEndpoint(100); // keep the refresh in flight while the others arrive
    try {
      const replies = await Promise.all(Array.from({ length: 20 }, () => h.proxy('crowd')));
      expect(replies.map((reply) => reply.status)).toEqual(Array(20).fill(200));
    } finally {
      h.provider.delayTokenEndpoint(0);
    }
    expect(h.provider.counts.refresh_token).toBe(refreshes + 1);
    const tokens = new Set(h.upstream.requests.slice(-20).map((request) => request.headers.authorization));
    expect(tokens.size).toBe(1);
  });

  it('marks the grant reauth_required on invalid_grant, answers 401 with the flag, and a new flow restores access', async () => {
    await connected(h, 'revoked');
    await h.provider.revokeGrants('revoked');
    h.clock.advance(INTO_REFRESH_WINDOW);
    const refreshes = h.provider.counts.refresh_token;
    const reply = await h.proxy('revoked');
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual({
      ok: false,
      error: 'auth_required',
      message: expect.any(String),
      auth_endpoint: '/initiateOAuth',
      app_id: APP_ID,
      reauth_required: true,
    });
    expect(h.provider.counts.refresh_token).toBe(refreshes + 1);
    expect((await h.connections('revoked')).body.connections[0].status).toBe('reauth_required');

    // Known dead: answered without asking the provider again.
    expect((await h.proxy('revoked')).body.reauth_required).toBe(true);
    expect(h.provider.counts.refresh_token).toBe(refreshes + 1);

    await connected(h, 'revoked');
    expect((await h.connections('revoked')).body.connections[0].status).toBe('active');
    expect((await h.proxy('revoked')).status).toBe(200);
  });

  it('answers a transient token-endpoint failure with 502 upstream_error (its status and body) and keeps the grant', async () => {
    await connected(h, 'flaky');
    h.clock.advance(INTO_REFRESH_WINDOW);
    h.provider.failTokenEndpoint(1, 503);
    const reply = await h.proxy('flaky');
    expect(reply.status).toBe(502);
    expect(reply.body).toEqual({
      ok: false,
      error: 'upstream_error',
      message: expect.any(String),
      upstream_status: 503,
      upstream_body: JSON.stringify({ error: 'temporarily_unavailable', note: 'injected by the test' }),
    });
    expect(reply.body.reauth_required).toBeUndefined();
    expect((await h.connections('flaky')).body.connections[0].status).toBe('active');
    expect((await h.proxy('flaky')).status).toBe(200);
  });

  it('answers 502 upstream_unreachable when the token endpoint cannot be reached, and keeps the grant', async () => {
    await connected(h, 'offline');
    const tokenUrl = `http://127.0.0.1:${await freePort()}/token`;
    await h.registerApp({ tokenUrl });
    try {
      h.clock.advance(INTO_REFRESH_WINDOW);
      const reply = await h.proxy('offline');
      expect(reply.status).toBe(502);
      expect(reply.body).toEqual({
        ok: false,
        error: 'upstream_unreachable',
        message: 'The token endpoint could not be reached: the connection was refused.',
      });
      expect((await h.connections('offline')).body.connections[0].status).toBe('active');
    } finally {
      await h.registerApp();
    }
    expect((await h.proxy('offline')).status).toBe(200);
  });

  it('answers 504 upstream_timeout when the token endpoint does not answer in time, and keeps the grant', async () => {
    await connected(h, 'slow');
    h.clock.advance(INTO_REFRESH_WINDOW);
    h.provider.delayTokenEndpoint(2_500);
    try {
      const reply = await h.proxy('slow');
      expect(reply.status).toBe(504);
      expect(reply.body).toEqual({ ok: false, error: 'upstream_timeout', message: expect.any(String) });
    } finally {
      h.provider.delayTokenEndpoint(0);
    }
    expect((await h.connections('slow')).body.connections[0].status).toBe('active');
    expect((await h.proxy('slow')).status).toBe(200);
  });

  it('stores a refresh answered after the call timed out: the call gets 504, the next one the rotated token (issue 23)', async () => {
    await connected(h, 'late');
    h.clock.advance(INTO_REFRESH_WINDOW);
    const refreshes = h.provider.counts.refresh_token;
    const before = (await h.connections('late')).body.connections[0];
    // The provider rotates the refresh token at once and answers after the call's time-out.
    h.provider.delayTokenAnswer(TIMEOUT_MS + 700);
    try {
      const reply = await h.proxy('late');
      expect(reply.status).toBe(504);
      expect(reply.body).toEqual({ ok: false, error: 'upstream_timeout', message: expect.any(String) });
    } finally {
      h.provider.delayTokenAnswer(0);
    }
    // The refresh went on without the call and stored what the provider answered.
    await vi.waitFor(
      async () =>
        expect((await h.connections('late')).body.connections[0].expiresAt).not.toBe(before.expiresAt),
      { timeout: 5_000, interval: 50 },
    );
    const next = await h.proxy('late');
    expect(next.status).toBe(200);
    expect(next.body.data).toEqual({ id: 'user-1', name: 'Ada' });
    expect(h.provider.counts.refresh_token).toBe(refreshes + 1);

    // The next refresh spends the rotated refresh token: it works only if that one was stored.
    h.clock.advance(INTO_REFRESH_WINDOW);
    expect((await h.proxy('late')).status).toBe(200);
    expect(h.provider.counts.refresh_token).toBe(refreshes + 2);
    expect((await h.connections('late')).body.connections[0].status).toBe('active');
  });

  it('stores a refresh whose caller went away while the provider was answering', async () => {
    await connected(h, 'gone');
    h.clock.advance(INTO_REFRESH_WINDOW);
    const refreshes = h.provider.counts.refresh_token;
    const before = (await h.connections('gone')).body.connections[0];
    h.provider.delayTokenAnswer(700);
    const caller = new AbortController();
    try {
      const call = fetch(new URL('/proxyV2', h.server.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...agentHeaders(h.agent, 'gone') },
        body: JSON.stringify({ toolId: `${APP_ID}:::getMe`, parameters: {} }),
        signal: caller.signal,
      }).catch((error: unknown) => error);
      // The provider has rotated the refresh token and not answered yet: the client leaves now.
      await vi.waitFor(() => expect(h.provider.counts.refresh_token).toBe(refreshes + 1), {
        timeout: 5_000,
        interval: 10,
      });
      caller.abort();
      expect(await call).toMatchObject({ name: 'AbortError' });
    } finally {
      h.provider.delayTokenAnswer(0);
    }
    await vi.waitFor(
      async () =>
        expect((await h.connections('gone')).body.connections[0].expiresAt).not.toBe(before.expiresAt),
      { timeout: 5_000, interval: 50 },
    );
    expect((await h.proxy('gone')).status).toBe(200);
    expect(h.provider.counts.refresh_token).toBe(refreshes + 1);
    // Only the rotated refresh token (stored after the caller left) makes the next refresh work.
    h.clock.advance(INTO_REFRESH_WINDOW);
    expect((await h.proxy('gone')).status).toBe(200);
    expect(h.provider.counts.refresh_token).toBe(refreshes + 2);
    expect((await h.connections('gone')).body.connections[0].status).toBe('active');
  });

  it('lets a call that comes while a late refresh runs use its answer instead of spending the old token', async () => {
    await connected(h, 'joiner');
    h.clock.advance(INTO_REFRESH_WINDOW);
    const refreshes = h.provider.counts.refresh_token;
    h.provider.delayTokenAnswer(TIMEOUT_MS + 700);
    let second: Awaited<ReturnType<Harness['proxy']>>;
    try {
      expect((await h.proxy('joiner')).status).toBe(504);
      // The refresh is still out; this call waits for it (up to its own time-out).
      second = await h.proxy('joiner');
    } finally {
      h.provider.delayTokenAnswer(0);
    }
    expect(second.status).toBe(200);
    expect(h.provider.counts.refresh_token).toBe(refreshes + 1);
    expect((await h.connections('joiner')).body.connections[0].status).toBe('active');
  });

  it('refreshes once and retries once when the upstream refuses a token believed valid', async () => {
    await connected(h, 'stale');
    expect((await h.proxy('stale')).status).toBe(200);
    await h.provider.revokeAccessTokens('stale');
    const refreshes = h.provider.counts.refresh_token;
    h.upstream.reset();
    const reply = await h.proxy('stale');
    expect(reply.status).toBe(200);
    expect(h.provider.counts.refresh_token).toBe(refreshes + 1);
    expect(h.upstream.requests).toHaveLength(2);
    expect(h.upstream.requests[0]?.headers.authorization).not.toBe(
      h.upstream.requests[1]?.headers.authorization,
    );
  });

  it('answers the upstream’s 401 as 502 when the retry with a fresh token is refused too', async () => {
    await connected(h, 'refused');
    const refreshes = h.provider.counts.refresh_token;
    h.upstream.setTokenCheck(() => false);
    try {
      h.upstream.reset();
      const reply = await h.proxy('refused');
      expect(reply.status).toBe(502);
      expect(reply.body).toMatchObject({ error: 'upstream_error', upstream_status: 401 });
      expect(h.upstream.requests).toHaveLength(2);
      expect(h.provider.counts.refresh_token).toBe(refreshes + 1);
    } finally {
      h.upstream.setTokenCheck((token) => h.provider.isAccessTokenValid(token));
    }
    expect((await h.connections('refused')).body.connections[0].status).toBe('active');
  });

  it('answers 403 rbac_denied when the grant lacks a scope the tool declares', async () => {
    await connected(h, 'scoped');
    h.upstream.reset();
    const reply = await h.proxy('scoped', 'createNote', { body: { text: 'hi' } });
    expect(reply.status).toBe(403);
    expect(reply.body).toEqual({
      ok: false,
      error: 'rbac_denied',
      message: expect.any(String),
      reason: 'scope_missing',
      scope: 'notes:write',
    });
    expect(h.upstream.requests).toHaveLength(0);

    await h.registerApp({ scopes: ['profile:read', 'notes:write'] }, 'notes');
    await connected(h, 'scoped', 'notes');
    expect((await h.connections('scoped', { query: '?appId=notes' })).body.connections[0].scopes).toEqual([
      'notes:write',
      'profile:read',
    ]);
    const allowed = await h.proxy('scoped', 'createNote', { body: { text: 'hi' } }, { appId: 'notes' });
    expect(allowed.status).toBe(200);
    expect(allowed.body.data).toEqual({ id: 'note-1', text: 'hi' });
  });
});

describeBackends('end-user OAuth: refresh answers without a refresh token', (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend.name, { provider: { rotateRefreshTokens: false } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('keeps the old refresh token when the answer carries none', async () => {
    await connected(h, 'keeper');
    for (let round = 1; round <= 3; round += 1) {
      h.clock.advance(INTO_REFRESH_WINDOW);
      expect((await h.proxy('keeper')).status).toBe(200);
      expect(h.provider.counts.refresh_token).toBe(round);
    }
  });
});

describeBackends('end-user OAuth: grants without a refresh token', (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend.name, { provider: { issueRefreshTokens: false } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('asks for a new authorization once the access token expires', async () => {
    await connected(h, 'short');
    expect((await h.proxy('short')).status).toBe(200);
    h.clock.advance(INTO_REFRESH_WINDOW);
    const reply = await h.proxy('short');
    expect([reply.status, reply.body.error, reply.body.reauth_required]).toEqual([
      401,
      'auth_required',
      true,
    ]);
    expect(h.provider.counts.refresh_token).toBe(0);
    expect((await h.connections('short')).body.connections[0].status).toBe('reauth_required');
    const audit = await call(h.server.url, 'GET', '/admin/audit?action=connection.reauth_required', {
      key: h.server.adminKey,
    });
    expect(audit.body.events).toEqual([
      expect.objectContaining({
        actor: 'system',
        details: { clientId: h.agent.clientId, userId: 'short', appId: APP_ID, reason: 'no_refresh_token' },
      }),
    ]);
  });
});
