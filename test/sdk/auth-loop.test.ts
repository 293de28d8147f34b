/**
 * executeWithAuth against the real server and the real OAuth provider: the user is simulated by
 * HTTP requests that follow every redirect (provider → toolgate callback → the agent's redirect URI).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AuthorizationInfo, AuthProgressEvent } from '../../sdk/src/index.ts';
import { AGENT_SCOPES } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import type { Visit } from '../support/simulated-user.ts';
import { recordingFetch, startWorld, type World } from './world.ts';

const FAST = { pollIntervalMs: 25, maxPollIntervalMs: 100, timeoutMs: 20_000 };

describeBackends('SDK: the auth_required → authorize → retry loop', (backend) => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(backend.name);
  });
  afterAll(async () => {
    await w?.close();
  });

  it('auth_required: the user consents, the SDK sees the connection and retries with the same key', async () => {
    const { fetch, sent } = recordingFetch();
    const events: AuthProgressEvent[] = [];
    const visits: Visit[] = [];
    let info: AuthorizationInfo | undefined;
    const before = w.meCalls();

    const result = await w.toolgate({ fetch }).executeWithAuth<{ name: string }>(
      'demo:::getMe',
      {},
      {
        ...FAST,
        userId: 'ada',
        clientRedirectUri: w.receiver.url,
        onAuthorizationUrl: async (url, given) => {
          info = given;
          visits.push(await w.consent(url, { account: 'ada' }));
        },
        onProgress: (event) => events.push(event),
      },
    );

    expect(result).toMatchObject({ ok: true, data: { id: 'user-1', name: 'Ada' }, replayed: false });
    expect(visits).toHaveLength(1);
    expect(visits[0]).toMatchObject({ status: 'success', reason: null, landingStatus: 200 });
    expect(visits[0]?.callbackUrl.pathname).toBe('/handleOAuthCallback');
    expect(`${visits[0]?.redirectedTo.origin}${visits[0]?.redirectedTo.pathname}`).toBe(w.receiver.url);
    expect((await w.receiver.next()).get('status')).toBe('success');
    expect(info).toMatchObject({ appId: 'demo', toolId: 'demo:::getMe', userId: 'ada', reauth: false });
    expect(info?.signal.aborted).toBe(true); // the SDK stopped waiting

    // Two calls to /proxyV2 (the 401 and the retry) under one key; the upstream ran once.
    const proxyCalls = sent.filter((s) => s.path === '/proxyV2');
    expect(proxyCalls).toHaveLength(2);
    const key = proxyCalls[0]?.headers.get('x-service-idempotency-key');
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(proxyCalls[1]?.headers.get('x-service-idempotency-key')).toBe(key);
    expect(result.ok && result.idempotencyKey).toBe(key);
    expect(w.meCalls() - before).toBe(1);

    const types = events.map((e) => e.type);
    expect(types[0]).toBe('auth_required');
    expect(types[1]).toBe('authorization_url');
    expect(types.slice(-2)).toEqual(['connected', 'retrying']);
    expect(events[0]).toEqual({
      type: 'auth_required',
      toolId: 'demo:::getMe',
      appId: 'demo',
      reauth: false,
    });
  });

  it('an authorized user runs straight through: no OAuth, no polling', async () => {
    const { fetch, sent } = recordingFetch();
    const result = await w.toolgate({ fetch }).executeWithAuth(
      'demo:::getMe',
      {},
      {
        userId: 'ada',
        clientRedirectUri: w.receiver.url,
        onAuthorizationUrl: () => {
          throw new Error('not expected');
        },
      },
    );
    expect(result.ok).toBe(true);
    expect(sent.map((s) => s.path)).toEqual(['/proxyV2']);
  });

  it('reauth_required after the grant is revoked at the provider: a newer grant is awaited, then success', async () => {
    const listed = await w.toolgate().listConnections({ userId: 'ada', appId: 'demo' });
    const firstGrant = listed.ok ? listed.connections[0] : undefined;
    expect(firstGrant?.status).toBe('active');
    await w.provider.revokeGrants('ada');

    const events: AuthProgressEvent[] = [];
    let info: AuthorizationInfo | undefined;
    let statusDuringConsent: string | undefined;
    const result = await w.toolgate().executeWithAuth(
      'demo:::getMe',
      {},
      {
        ...FAST,
        userId: 'ada',
        clientRedirectUri: w.receiver.url,
        onAuthorizationUrl: async (url, given) => {
          info = given;
          const now = await w.toolgate().listConnections({ userId: 'ada', appId: 'demo' });
          statusDuringConsent = now.ok ? now.connections[0]?.status : undefined;
          await w.consent(url, { account: 'ada' });
        },
        onProgress: (event) => events.push(event),
      },
    );

    expect(result).toMatchObject({ ok: true, data: { name: 'Ada' } });
    expect(statusDuringConsent).toBe('reauth_required');
    expect(info?.reauth).toBe(true);
    expect(events[0]).toEqual({ type: 'auth_required', toolId: 'demo:::getMe', appId: 'demo', reauth: true });
    const connected = events.find((e) => e.type === 'connected');
    expect(connected?.type === 'connected' && connected.connection.status).toBe('active');
    expect(
      connected?.type === 'connected' &&
        Date.parse(connected.connection.updatedAt) > Date.parse(firstGrant?.updatedAt ?? ''),
    ).toBe(true);
  });

  it('no double execution of getMe: lost retry answer → replay, upstream hit exactly once', async () => {
    let proxyCalls = 0;
    const losing: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const response = await fetch(request);
      if (new URL(request.url).pathname === '/proxyV2' && ++proxyCalls === 2) {
        await response.arrayBuffer();
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
        });
      }
      return response;
    };
    const { fetch: recording, sent } = recordingFetch(losing);
    const before = w.meCalls();
    const result = await w.toolgate({ fetch: recording }).executeWithAuth(
      'demo:::getMe',
      {},
      {
        ...FAST,
        userId: 'carl',
        clientRedirectUri: w.receiver.url,
        onAuthorizationUrl: async (url) => {
          await w.consent(url, { account: 'carl' });
        },
      },
    );
    expect(result).toMatchObject({ ok: true, replayed: true, data: { id: 'user-1' } });
    const proxy = sent.filter((s) => s.path === '/proxyV2');
    expect(proxy).toHaveLength(3); // 401, the retry (answer lost), the resend (replayed)
    expect(new Set(proxy.map((s) => s.headers.get('x-service-idempotency-key'))).size).toBe(1);
    expect(w.meCalls() - before).toBe(1);
  });

  it('times out with a typed auth_timeout when the user never authorizes', async () => {
    const { fetch, sent } = recordingFetch();
    let info: AuthorizationInfo | undefined;
    let given: string | undefined;
    const started = Date.now();
    const result = await w.toolgate({ fetch }).executeWithAuth(
      'demo:::getMe',
      {},
      {
        userId: 'dora',
        clientRedirectUri: w.receiver.url,
        timeoutMs: 400,
        pollIntervalMs: 25,
        maxPollIntervalMs: 100,
        onAuthorizationUrl: (url, i) => {
          given = url;
          info = i;
        },
      },
    );
    if (result.ok || result.error !== 'auth_timeout') throw new Error(JSON.stringify(result));
    expect(result.appId).toBe('demo');
    expect(result.authorizationUrl).toBe(given);
    expect(result.waitedMs).toBeGreaterThanOrEqual(400);
    expect(result.lastError).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(info?.signal.aborted).toBe(true);
    // Polling with backoff: several polls, pauses growing to the cap, then one retry never happened.
    const polls = sent.filter((s) => s.path === '/connections').length;
    expect(polls).toBeGreaterThanOrEqual(4);
    expect(polls).toBeLessThan(20);
    expect(sent.filter((s) => s.path === '/proxyV2')).toHaveLength(1);
  });

  it('aborts with a typed aborted result when the signal fires while waiting', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const result = await w.toolgate().executeWithAuth(
      'demo:::getMe',
      {},
      {
        userId: 'erin',
        clientRedirectUri: w.receiver.url,
        pollIntervalMs: 1_000,
        signal: controller.signal,
        onAuthorizationUrl: () => {
          setTimeout(() => controller.abort('the user closed the chat'), 100);
        },
      },
    );
    expect(result).toEqual({
      ok: false,
      error: 'aborted',
      message: expect.any(String),
      reason: 'the user closed the chat',
    });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('a denied consent reaches the agent as status=error; aborting then ends the wait', async () => {
    const controller = new AbortController();
    const result = await w.toolgate().executeWithAuth(
      'demo:::getMe',
      {},
      {
        ...FAST,
        userId: 'fay',
        clientRedirectUri: w.receiver.url,
        signal: controller.signal,
        onAuthorizationUrl: async (url) => {
          const visit = await w.consent(url, { account: 'fay', deny: true });
          if (visit.status !== 'success') controller.abort(visit.reason);
        },
      },
    );
    expect(result).toMatchObject({ ok: false, error: 'aborted', reason: 'access_denied' });
  });

  it('a callback that throws ends the loop with its own error', async () => {
    await expect(
      w.toolgate().executeWithAuth(
        'demo:::getMe',
        {},
        {
          ...FAST,
          userId: 'gus',
          clientRedirectUri: w.receiver.url,
          onAuthorizationUrl: () => {
            throw new Error('no chat channel');
          },
        },
      ),
    ).rejects.toThrow('no chat channel');
  });

  it('typed failures of the loop itself: redirect_uri_mismatch, rbac_denied without oauth:initiate', async () => {
    const mismatch = await w.toolgate().executeWithAuth(
      'demo:::getMe',
      {},
      {
        userId: 'hal',
        clientRedirectUri: 'https://not-registered.example/cb',
        onAuthorizationUrl: () => {},
      },
    );
    expect(mismatch).toMatchObject({ ok: false, error: 'redirect_uri_mismatch', status: 400 });

    const limited = await w.newAgent(AGENT_SCOPES.filter((s) => s !== 'oauth:initiate'));
    const refused = await w
      .toolgate({ apiKey: limited.apiKey, clientId: limited.clientId })
      .executeWithAuth(
        'demo:::getMe',
        {},
        { userId: 'hal', clientRedirectUri: w.receiver.url, onAuthorizationUrl: () => {} },
      );
    if (refused.ok || refused.error !== 'rbac_denied') throw new Error(JSON.stringify(refused));
    expect(refused.body.scope).toBe('oauth:initiate');
  });

  it('waitForConnection answers at once for a connected user; deleteConnection forgets the grant', async () => {
    const toolgate = w.toolgate({ userId: 'ada' });
    const waited = await toolgate.waitForConnection({ appId: 'demo', timeoutMs: 1_000 });
    expect(waited).toMatchObject({ ok: true, connection: { appId: 'demo', status: 'active' } });
    expect(await toolgate.deleteConnection('demo')).toEqual({ ok: true, requestId: expect.any(String) });
    const after = await toolgate.execute('demo:::getMe', {});
    expect(after).toMatchObject({ ok: false, error: 'auth_required', body: { app_id: 'demo' } });
    expect(after.ok === false && 'body' in after && 'reauth_required' in after.body).toBe(false);
  });
});
