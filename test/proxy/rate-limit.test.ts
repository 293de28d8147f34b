/**
 * The rate limit row of /proxyV2 (docs/reference.md "Calling conventions", §2 order of checks, §6): at most N calls per API
 * key in any 60-second window, a burst of N allowed, 429 with Retry-After = retry_after.
 * A server of its own with RATE_LIMIT_PER_KEY_PER_MIN=3 and a clock the tests move.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { type Agent, provisionAgent, registerApp } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import type { Reply, TestServer } from '../support/server.ts';
import type { Upstream } from '../support/upstream.ts';
import { startWorld, type World } from '../support/world.ts';

const LIMIT = 3;

describeBackends('POST /proxyV2 rate limit', (backend) => {
  let world: World;
  let server: TestServer;
  let upstream: Upstream;
  const clock = manualClock();

  beforeAll(async () => {
    world = await startWorld(backend.name, {
      server: { env: { RATE_LIMIT_PER_KEY_PER_MIN: String(LIMIT) }, clock },
    });
    ({ server, upstream } = world);
    await registerApp(server, 'demo', {
      provider: 'acme.demo',
      openapi: upstream.openapi,
      auth: { type: 'none' },
    });
  });
  afterAll(async () => {
    await world?.close();
  });
  beforeEach(() => upstream.reset());

  const good = (agent: Agent) => world.proxy(agent, { toolId: 'demo:::getText', parameters: {} });
  const limited = (retryAfter: number) => ({
    ok: false,
    error: 'rate_limited',
    message: 'Too many calls with this API key; retry later.',
    retry_after: retryAfter,
  });
  function expectLimited(reply: Reply, retryAfter: number): void {
    expect(reply.status).toBe(429);
    expect(reply.body).toEqual(limited(retryAfter));
    expect(reply.headers.get('retry-after')).toBe(String(retryAfter));
  }

  it('allows a burst of N, then answers 429 with Retry-After equal to retry_after', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    for (let i = 0; i < LIMIT; i += 1) expect((await good(agent)).status).toBe(200);
    expectLimited(await good(agent), 60);
    expect(upstream.requests).toHaveLength(LIMIT);
  });

  it('logs a refused call with the tool it asked for (the call log, docs/reference.md)', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    for (let i = 0; i < LIMIT; i += 1) await good(agent);
    expectLimited(await good(agent), 60);
    await server.app.deps.callLog.flush();
    const reply = await world.call('GET', `/admin/calls?clientId=${agent.clientId}&outcome=rate_limited`, {
      key: server.adminKey,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      calls: [
        {
          id: expect.stringMatching(/^\d+$/),
          at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          durationMs: expect.any(Number),
          surface: 'rest',
          keyId: agent.keyId,
          clientId: agent.clientId,
          userId: null,
          appId: null,
          toolId: 'demo:::getText',
          outcome: 'rate_limited',
          status: 429,
          upstreamStatus: null,
          idempotentReplay: false,
          requestId: expect.any(String),
        },
      ],
    });
  });

  it('counts down Retry-After in whole seconds, at least 1', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    for (let i = 0; i < LIMIT; i += 1) await good(agent);
    clock.advance(30_500);
    expectLimited(await good(agent), 30);
    clock.advance(29_400);
    expectLimited(await good(agent), 1);
    clock.advance(100);
    expect((await good(agent)).status).toBe(200);
  });

  it('does not count refused calls: a full burst is allowed again 60 s after the first', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    for (let i = 0; i < LIMIT; i += 1) await good(agent);
    for (let i = 0; i < 5; i += 1) expect((await good(agent)).status).toBe(429);
    clock.advance(60_000);
    for (let i = 0; i < LIMIT; i += 1) expect((await good(agent)).status).toBe(200);
    expect((await good(agent)).status).toBe(429);
  });

  it('slides: each call frees its place 60 s after it was made', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    await good(agent);
    clock.advance(20_000);
    await good(agent);
    clock.advance(20_000);
    await good(agent);
    clock.advance(10_000);
    expectLimited(await good(agent), 10);
    clock.advance(10_000);
    expect((await good(agent)).status).toBe(200);
    expectLimited(await good(agent), 20);
  });

  it('counts authenticated calls that fail later (bad body, unknown tool, bad parameters)', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    expect((await world.proxy(agent, { toolId: 'demo:::getText' })).status).toBe(400);
    expect((await world.proxy(agent, { toolId: 'demo:::nope', parameters: {} })).status).toBe(404);
    expect((await world.proxy(agent, { toolId: 'demo:::getItem', parameters: {} })).status).toBe(400);
    expectLimited(await good(agent), 60);
    expect(upstream.requests).toEqual([]);
  });

  describe('order of checks', () => {
    let agent: Agent;
    beforeAll(async () => {
      agent = await provisionAgent(server, ['tools:execute:demo']);
      for (let i = 0; i < LIMIT; i += 1) await good(agent);
    });

    it('answers 429 before looking at the body, the tool, the scope or the parameters', async () => {
      for (const body of [
        { parameters: 'not an object' },
        ['not', 'an', 'object'],
        { toolId: 'nope:::nothing', parameters: {} },
        { toolId: 'other:::getText', parameters: {} },
        { toolId: 'demo:::getItem', parameters: { nope: 1 } },
      ]) {
        expectLimited(await world.proxy(agent, body), 60);
      }
      expect(upstream.requests).toEqual([]);
    });

    it('answers 401 before the rate limit: a bad key or a wrong client', async () => {
      const badKey = await world.call('POST', '/proxyV2', {
        key: `${agent.apiKey}x`,
        clientId: agent.clientId,
        body: { toolId: 'demo:::getText', parameters: {} },
      });
      expect([badKey.status, badKey.body.error]).toEqual([401, 'invalid_api_key']);
      const other = await provisionAgent(server, ['tools:execute']);
      const wrongClient = await world.call('POST', '/proxyV2', {
        key: agent.apiKey,
        clientId: other.clientId,
        body: { toolId: 'demo:::getText', parameters: {} },
      });
      expect([wrongClient.status, wrongClient.body.error]).toEqual([401, 'invalid_client']);
    });

    it('limits per API key: another key of the same client is not limited', async () => {
      const sibling = await world.call('POST', `/admin/clients/${agent.clientId}/api-keys`, {
        key: server.adminKey,
        body: { scopes: ['tools:execute'] },
      });
      const second = { clientId: agent.clientId, keyId: sibling.body.keyId, apiKey: sibling.body.apiKey };
      expect((await good(second)).status).toBe(200);
      expect((await good(agent)).status).toBe(429);
    });

    it('does not limit GET /tools or admin calls', async () => {
      for (let i = 0; i < LIMIT + 2; i += 1) {
        const tools = await world.call('GET', '/tools', {
          key: agent.apiKey,
          clientId: agent.clientId,
        });
        expect(tools.status).toBe(200);
        const admin = await world.call('GET', '/admin/apps', { key: server.adminKey });
        expect(admin.status).toBe(200);
      }
    });
  });
});
