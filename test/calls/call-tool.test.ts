/**
 * The tool-call core called directly (no HTTP, no tRPC, no MCP): its typed outcomes in the
 * contract's order of checks, with the real dependencies of a running server and a real upstream.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { type AdmittedCaller, admitCall, type CallRequest, callTool } from '../../server/calls/call-tool.ts';
import type { AppDeps } from '../../server/deps.ts';
import { registerApp } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

describeBackends('callTool (the core)', (backend) => {
  let server: TestServer;
  let upstream: Upstream;
  let deps: AppDeps;

  const caller = (scopes: string[], keyId = `key_core${scopes.length}`) => {
    const admitted = admitCall(
      deps,
      { principal: { keyId, clientId: 'cli_core', scopes }, clientId: 'cli_core' },
      site(),
    );
    if (!admitted.ok) throw new Error('refused');
    return admitted.value;
  };
  const site = () => ({ surface: 'rest' as const, requestId: 'req_core', startedAt: performance.now() });
  const request = (extra: Partial<CallRequest>): CallRequest => ({
    ...site(),
    toolId: 'plain:::getItem',
    parameters: { itemId: 'x' },
    log: () => deps.logger,
    ...extra,
  });
  const failure = async (who: AdmittedCaller, extra: Partial<CallRequest>) => {
    const outcome = await callTool(deps, who, request(extra));
    if (outcome.ok) throw new Error('expected a failure');
    return outcome.error;
  };

  beforeAll(async () => {
    [server, upstream] = await Promise.all([
      startServer(backend.name, { env: { RATE_LIMIT_PER_KEY_PER_MIN: '3' } }),
      startUpstream(),
    ]);
    deps = server.app.deps;
    await registerApp(server, 'plain', {
      provider: 'acme.plain',
      openapi: upstream.openapi,
      auth: { type: 'none' },
    });
    await registerApp(server, 'other', {
      provider: 'acme.other',
      openapi: upstream.openapi,
      auth: { type: 'none' },
    });
  });

  afterAll(async () => {
    await Promise.all([server?.close(), upstream?.close()]);
  });

  it('answers the envelope, and the stored answer with the replay header for a repeated key', async () => {
    const who = caller(['tools:execute'], 'key_replay');
    const first = await callTool(deps, who, request({ idempotencyKey: 'k-1' }));
    expect(first).toEqual({
      ok: true,
      value: {
        body: {
          ok: true,
          data: { id: 'x', title: expect.any(String) },
          meta: { tool_id: 'plain:::getItem', duration_ms: expect.any(Number), provider: 'acme.plain' },
        },
        headers: {},
      },
    });
    const again = await callTool(deps, who, request({ idempotencyKey: 'k-1' }));
    expect(again).toEqual({
      ok: true,
      value: { body: first.ok && first.value.body, headers: { 'x-service-idempotent-replayed': 'true' } },
    });
  });

  it('fails in the contract order: tool → scope → parameters → user id → idempotency key', async () => {
    const narrow = caller(['tools:execute:other'], 'key_narrow');
    expect((await failure(narrow, { toolId: 'plain:::nope', parameters: { bogus: 1 } })).body.error).toBe(
      'tool_not_found',
    );
    // The `apps` narrowing hides another app's tool as unknown, before the scope is looked at.
    expect((await failure(narrow, { apps: new Set(['other']) })).body).toMatchObject({
      error: 'tool_not_found',
      tool_id: 'plain:::getItem',
    });
    expect((await failure(narrow, { parameters: {} })).body).toMatchObject({
      error: 'rbac_denied',
      scope: 'tools:execute:plain',
    });
    const wide = caller(['tools:execute'], 'key_wide');
    expect((await failure(wide, { parameters: {}, userId: '' })).body.error).toBe('invalid_parameters');
    expect((await failure(wide, { userId: '' })).body).toMatchObject({ error: 'invalid_request' });
    expect((await failure(wide, { idempotencyKey: '' })).body).toMatchObject({ error: 'invalid_request' });
    // A bare tool name resolves with the app id header, to the composite id.
    const bare = await callTool(deps, wide, request({ toolId: 'getItem', appId: 'plain' }));
    expect(bare.ok && bare.value.body.meta.tool_id).toBe('plain:::getItem');
  });

  it('answers idempotency_key_reused for a key used with other parameters, idempotency_in_progress while it runs', async () => {
    const who = caller(['tools:execute'], 'key_idem');
    expect((await callTool(deps, who, request({ idempotencyKey: 'k-2' }))).ok).toBe(true);
    expect(await failure(who, { idempotencyKey: 'k-2', parameters: { itemId: 'y' } })).toEqual({
      body: {
        ok: false,
        error: 'idempotency_key_reused',
        message: 'This idempotency key was already used with a different request.',
      },
      headers: {},
    });
    const slow = { toolId: 'plain:::slow', parameters: { ms: 1_500 }, idempotencyKey: 'k-3' };
    const first = callTool(deps, who, request(slow));
    await vi.waitFor(() => expect(upstream.requests.some((r) => r.path.startsWith('/slow'))).toBe(true), {
      timeout: 10_000,
      interval: 10,
    });
    expect(await failure(who, slow)).toEqual({
      body: {
        ok: false,
        error: 'idempotency_in_progress',
        message: 'A request with this idempotency key is still running; retry later.',
      },
      headers: {},
    });
    expect((await first).ok).toBe(true);
  });

  it('replays a stored 502 as the same failure with the replay header', async () => {
    const who = caller(['tools:execute'], 'key_replay_502');
    const call = { toolId: 'plain:::getStatus', parameters: { code: 503 }, idempotencyKey: 'k-502' };
    const first = await failure(who, call);
    expect(first).toEqual({
      body: expect.objectContaining({ ok: false, error: 'upstream_error', upstream_status: 503 }),
      headers: {},
    });
    expect(await failure(who, call)).toEqual({
      body: first.body,
      headers: { 'x-service-idempotent-replayed': 'true' },
    });
  });

  it('admits at most N calls per key a minute, the refusal carrying Retry-After', () => {
    const principal = { keyId: 'key_limited', clientId: 'cli_core', scopes: ['tools:execute'] };
    for (let i = 0; i < 3; i += 1)
      expect(admitCall(deps, { principal, clientId: 'cli_core' }, site()).ok).toBe(true);
    const refused = admitCall(deps, { principal, clientId: 'cli_core' }, site());
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    const retryAfter = refused.error.body.error === 'rate_limited' ? refused.error.body.retry_after : 0;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(refused.error.headers).toEqual({ 'retry-after': String(retryAfter) });
  });
});
