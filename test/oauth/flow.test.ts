import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { LIMITS } from '../../server/config.ts';
import { describeBackends } from '../support/db.ts';
import { call } from '../support/server.ts';
import {
  APP_ID,
  CALLBACK,
  CLIENT_REDIRECT,
  dumpDatabase,
  type Harness,
  redirectQuery,
  startHarness,
} from './harness.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describeBackends('end-user OAuth: initiate and callback', (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend.name);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('runs the whole flow: initiate → provider → callback 302 → /proxyV2 with the user token', async () => {
    const before = await h.proxy('ada');
    expect(before.status).toBe(401);
    expect(before.body).toEqual({
      ok: false,
      error: 'auth_required',
      message: expect.any(String),
      auth_endpoint: '/initiateOAuth',
      app_id: APP_ID,
    });

    const started = await h.initiate('ada');
    expect(started.status).toBe(200);
    expect(started.body).toEqual({
      authorizationUrl: expect.any(String),
      state: expect.any(String),
      expires_at: new Date(h.clock.now() + 10 * 60 * 1000).toISOString(),
    });
    const url = new URL(started.body.authorizationUrl);
    expect(`${url.origin}${url.pathname}`).toBe(h.provider.authorizationUrl);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: h.provider.clientId,
      redirect_uri: CALLBACK,
      scope: 'profile:read',
      state: started.body.state,
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: 'S256',
    });
    // 256 random bits, base64url: well over the 128 the contract asks for.
    expect(started.body.state).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const back = await h.provider.authorize(started.body.authorizationUrl, { account: 'ada' });
    expect(back.searchParams.get('iss')).toBe(h.provider.issuer);
    const done = await h.callback(back);
    expect(done.status).toBe(302);
    expect(done.headers.get('location')).toBe(`${CLIENT_REDIRECT}&status=success`);
    expect(done.headers.get('cache-control')).toBe('no-store');
    expect(h.provider.counts.authorization_code).toBe(1);

    h.upstream.reset();
    const me = await h.proxy('ada');
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      ok: true,
      data: { id: 'user-1', name: 'Ada' },
      meta: { tool_id: `${APP_ID}:::getMe`, duration_ms: expect.any(Number), provider: 'toolgate.test' },
    });
    const sent = h.upstream.requests.at(-1)?.headers.authorization ?? '';
    expect(sent).toMatch(/^Bearer .+/);
    expect(await h.provider.isAccessTokenValid(sent.slice('Bearer '.length))).toBe(true);

    const listed = await h.connections('ada');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      connections: [
        {
          appId: APP_ID,
          status: 'active',
          scopes: ['profile:read'],
          expiresAt: expect.stringMatching(ISO),
          updatedAt: expect.stringMatching(ISO),
        },
      ],
    });
  });

  it('stores the state only as its SHA-256 and the verifier only sealed', async () => {
    const started = await h.initiate('hash-check');
    const state: string = started.body.state;
    const dump = await dumpDatabase(h.server);
    expect(dump).not.toContain(state);
    expect(dump).toContain(createHash('sha256').update(state).digest('hex'));
  });

  it('adds the registration’s extra parameters without letting them override ours', async () => {
    await h.registerApp(
      { extraAuthParams: { prompt: 'consent', access_type: 'offline', state: 'nope' } },
      'extra',
    );
    const started = await h.initiate('x', { appId: 'extra' });
    expect(started.status).toBe(200);
    const params = new URL(started.body.authorizationUrl).searchParams;
    expect(params.get('prompt')).toBe('consent');
    expect(params.get('access_type')).toBe('offline');
    expect(params.getAll('state')).toEqual([started.body.state]);
  });

  it('rejects initiation without the oauth:initiate scope', async () => {
    const agent = await h.newAgent(['tools:execute', 'connections:read']);
    const reply = await h.initiate('ada', { agent });
    expect(reply.status).toBe(403);
    expect(reply.body).toEqual({
      ok: false,
      error: 'rbac_denied',
      message: expect.any(String),
      reason: 'scope_missing',
      scope: 'oauth:initiate',
    });
  });

  it('answers 401 before looking at the body: no key, wrong client', async () => {
    const noKey = await call(h.server.url, 'POST', '/initiateOAuth', { body: {} });
    expect([noKey.status, noKey.body.error]).toEqual([401, 'invalid_api_key']);
    const other = await h.newAgent();
    const wrong = await call(h.server.url, 'POST', '/initiateOAuth', {
      key: h.agent.apiKey,
      clientId: other.clientId,
      body: {},
    });
    expect([wrong.status, wrong.body.error]).toEqual([401, 'invalid_client']);
  });

  it('answers 400 invalid_request for a body of the wrong shape, with pointers', async () => {
    const reply = await call(h.server.url, 'POST', '/initiateOAuth', {
      key: h.agent.apiKey,
      clientId: h.agent.clientId,
      body: { appId: APP_ID, userId: '' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      ok: false,
      error: 'invalid_request',
      message: expect.any(String),
      issues: expect.arrayContaining([
        { path: '/userId', message: expect.any(String) },
        { path: '/clientRedirectUri', message: 'Required value is missing.' },
      ]),
    });
  });

  it('answers 404 app_not_found for an unknown app', async () => {
    const reply = await h.initiate('ada', { appId: 'nope' });
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({
      ok: false,
      error: 'app_not_found',
      message: expect.any(String),
      app_id: 'nope',
    });
  });

  it('answers 400 invalid_request for an app that does not use OAuth', async () => {
    const put = await call(h.server.url, 'PUT', '/admin/apps/plain', {
      key: h.server.adminKey,
      body: { provider: 'toolgate.test', openapi: h.upstream.openapi, auth: { type: 'none' } },
    });
    expect(put.status).toBe(200);
    const reply = await h.initiate('ada', { appId: 'plain' });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      ok: false,
      error: 'invalid_request',
      message: expect.any(String),
      issues: [{ path: '/appId', message: expect.any(String) }],
    });
  });

  it.each([
    ['an unregistered URI', 'https://evil.example/cb'],
    ['a trailing slash more', 'https://agent.example/oauth/done/?tenant=a%20b&x=1'],
    ['another encoding of the query', 'https://agent.example/oauth/done?tenant=a+b&x=1'],
    ['a missing query parameter', 'https://agent.example/oauth/done?tenant=a%20b'],
    ['not a URL at all', 'done'],
  ])('answers 400 redirect_uri_mismatch for %s (exact match only)', async (_label, uri) => {
    const reply = await h.initiate('ada', { redirectUri: uri });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ ok: false, error: 'redirect_uri_mismatch', message: expect.any(String) });
  });

  it('does not accept a redirect URI registered on another client', async () => {
    const other = await h.newAgent();
    await call(h.server.url, 'POST', `/admin/clients/${other.clientId}/redirect-uris`, {
      key: h.server.adminKey,
      body: { uri: 'https://other.example/cb' },
    });
    const reply = await h.initiate('ada', { redirectUri: 'https://other.example/cb' });
    expect([reply.status, reply.body.error]).toEqual([400, 'redirect_uri_mismatch']);
  });

  it('answers 400 state_invalid when the state is missing, unknown or forged', async () => {
    const exchanges = h.provider.counts.authorization_code;
    for (const query of [
      '',
      '?code=abc',
      '?state=&code=abc',
      '?state=forged-state&code=abc',
      `?state=${'x'.repeat(600)}`,
    ]) {
      const reply = await h.callback(`${CALLBACK}${query}`);
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({ ok: false, error: 'state_invalid', message: expect.any(String) });
      expect(reply.headers.get('location')).toBeNull();
    }
    expect(h.provider.counts.authorization_code).toBe(exchanges);
  });

  it('answers a replayed callback with 302 state_invalid and no second code exchange', async () => {
    const started = await h.initiate('replay');
    const back = await h.provider.authorize(started.body.authorizationUrl, { account: 'replay' });
    const exchanges = h.provider.counts.authorization_code;
    const first = await h.callback(back);
    expect(redirectQuery(first).get('status')).toBe('success');
    const second = await h.callback(back);
    expect(second.status).toBe(302);
    expect(second.headers.get('location')).toBe(`${CLIENT_REDIRECT}&status=error&reason=state_invalid`);
    expect(h.provider.counts.authorization_code).toBe(exchanges + 1);
  });

  it('lets exactly one of concurrent callbacks with one state exchange the code', async () => {
    const started = await h.initiate('race');
    const back = await h.provider.authorize(started.body.authorizationUrl, { account: 'race' });
    const exchanges = h.provider.counts.authorization_code;
    const replies = await Promise.all(Array.from({ length: 8 }, () => h.callback(back)));
    const statuses = replies.map((reply) => redirectQuery(reply).get('status'));
    expect(statuses.filter((s) => s === 'success')).toHaveLength(1);
    expect(replies.filter((r) => redirectQuery(r).get('reason') === 'state_invalid')).toHaveLength(7);
    expect(h.provider.counts.authorization_code).toBe(exchanges + 1);
  });

  it('expires the state after 10 minutes by the injected clock, and keeps it known for 24 h', async () => {
    const started = await h.initiate('late');
    const back = await h.provider.authorize(started.body.authorizationUrl, { account: 'late' });
    const exchanges = h.provider.counts.authorization_code;
    h.clock.advance(LIMITS.oauthStateTtlMs);
    const late = await h.callback(back);
    expect(late.status).toBe(302);
    expect(redirectQuery(late).get('reason')).toBe('state_invalid');
    // A day later the row is still there: still a 302, not a 400.
    h.clock.advance(23 * 60 * 60 * 1000);
    const later = await h.callback(back);
    expect([later.status, redirectQuery(later).get('reason')]).toEqual([302, 'state_invalid']);
    expect(h.provider.counts.authorization_code).toBe(exchanges);
  });

  it('forgets a state 24 h after its expiry: a callback after that gets 400', async () => {
    const started = await h.initiate('ancient');
    const back = await h.provider.authorize(started.body.authorizationUrl, { account: 'ancient' });
    h.clock.advance(LIMITS.oauthStateTtlMs + LIMITS.oauthStateRetentionMs + 1);
    expect((await h.initiate('trigger')).status).toBe(200); // pruning runs beside a new initiation
    await vi.waitFor(async () => expect((await h.callback(back)).status).toBe(400), { timeout: 5_000 });
  });

  it('accepts a callback just inside the 10 minutes', async () => {
    const started = await h.initiate('in-time');
    const back = await h.provider.authorize(started.body.authorizationUrl, { account: 'in-time' });
    h.clock.advance(LIMITS.oauthStateTtlMs - 1);
    const done = await h.callback(back);
    expect(redirectQuery(done).get('status')).toBe('success');
  });

  it('passes access_denied (and other provider errors) on as reason, and burns the state', async () => {
    const started = await h.initiate('denier');
    const back = await h.provider.authorize(started.body.authorizationUrl, { deny: true });
    expect(back.searchParams.get('error')).toBe('access_denied');
    const denied = await h.callback(back);
    expect(denied.status).toBe(302);
    expect(denied.headers.get('location')).toBe(`${CLIENT_REDIRECT}&status=error&reason=access_denied`);
    const again = await h.callback(back);
    expect(redirectQuery(again).get('reason')).toBe('state_invalid');

    const other = await h.initiate('denier');
    const reply = await h.callback(
      `${CALLBACK}?error=temporarily_unavailable&state=${other.body.state}&iss=${encodeURIComponent(h.provider.issuer)}`,
    );
    expect(redirectQuery(reply).get('reason')).toBe('temporarily_unavailable');
    expect((await h.connections('denier')).body.connections).toEqual([]);
  });

  it('answers code_exchange_failed when the provider rejects the code', async () => {
    const started = await h.initiate('bad-code');
    const back = await h.provider.authorize(started.body.authorizationUrl, { account: 'bad-code' });
    back.searchParams.set('code', 'not-the-code');
    const reply = await h.callback(back);
    expect(reply.status).toBe(302);
    expect(reply.headers.get('location')).toBe(`${CLIENT_REDIRECT}&status=error&reason=code_exchange_failed`);
    expect((await h.connections('bad-code')).body.connections).toEqual([]);
  });

  it('refuses an authorization response from another issuer (RFC 9207 mix-up defence)', async () => {
    const started = await h.initiate('mixup');
    const back = await h.provider.authorize(started.body.authorizationUrl, { account: 'mixup' });
    const exchanges = h.provider.counts.authorization_code;
    back.searchParams.set('iss', 'https://attacker.example');
    const reply = await h.callback(back);
    expect(redirectQuery(reply).get('status')).toBe('error');
    expect(redirectQuery(reply).get('reason')).toBe('issuer_mismatch');
    expect(h.provider.counts.authorization_code).toBe(exchanges);
  });

  it('never redirects to a URI that was unregistered after initiation', async () => {
    const uri = 'https://agent.example/removed';
    await call(h.server.url, 'POST', `/admin/clients/${h.agent.clientId}/redirect-uris`, {
      key: h.server.adminKey,
      body: { uri },
    });
    const started = await h.initiate('removed', { redirectUri: uri });
    expect(started.status).toBe(200);
    await call(
      h.server.url,
      'DELETE',
      `/admin/clients/${h.agent.clientId}/redirect-uris?uri=${encodeURIComponent(uri)}`,
      { key: h.server.adminKey },
    );
    const back = await h.provider.authorize(started.body.authorizationUrl, { account: 'removed' });
    const reply = await h.callback(back);
    expect([reply.status, reply.body.error]).toEqual([400, 'state_invalid']);
  });

  it('replaces the grant when the user authorizes again', async () => {
    expect(redirectQuery(await h.connect('again')).get('status')).toBe('success');
    const first = (await h.connections('again')).body.connections;
    h.clock.advance(1000);
    expect(redirectQuery(await h.connect('again')).get('status')).toBe('success');
    const second = (await h.connections('again')).body.connections;
    expect(second).toHaveLength(1);
    expect(second[0].updatedAt > first[0].updatedAt).toBe(true);
    expect((await h.proxy('again')).status).toBe(200);
  });

  it('keeps grants apart per client and per user', async () => {
    const other = await h.newAgent();
    expect(redirectQuery(await h.connect('shared-name')).get('status')).toBe('success');
    expect((await h.proxy('shared-name')).status).toBe(200);
    const crossClient = await h.proxy('shared-name', 'getMe', {}, { agent: other });
    expect([crossClient.status, crossClient.body.error]).toEqual([401, 'auth_required']);
    expect(crossClient.body.reauth_required).toBeUndefined();
    const crossUser = await h.proxy('Shared-name');
    expect([crossUser.status, crossUser.body.error]).toEqual([401, 'auth_required']);
    expect((await h.connections('shared-name', { agent: other })).body.connections).toEqual([]);
    expect((await h.connections('shared-name')).body.connections).toHaveLength(1);
  });

  it('needs X-Service-User-Id for a tool of an oauth2 app', async () => {
    const reply = await h.proxy(undefined);
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('invalid_request');
  });
});

describeBackends('end-user OAuth with client_secret_post', (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend.name, { provider: { tokenAuthMethod: 'client_secret_post' } });
    await h.registerApp({ tokenAuthMethod: 'client_secret_post' });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('authenticates to the token endpoint with the secret in the body', async () => {
    expect(redirectQuery(await h.connect('poster')).get('status')).toBe('success');
    expect((await h.proxy('poster')).status).toBe(200);
  });
});
