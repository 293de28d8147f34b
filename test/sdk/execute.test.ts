import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiError,
  type ErrorBody,
  type ExecuteResult,
  failureMessage,
  isApiError,
  Toolgate,
  ToolgateArgumentError,
} from '../../sdk/src/index.ts';
import { describeBackends } from '../support/db.ts';
import { freePort } from '../support/ports.ts';
import { recordingFetch, startWorld, type World } from './world.ts';

/** Narrows a result to one code or fails the test with what came instead. */
function expectError<R extends ExecuteResult | { ok: boolean; error?: string }>(
  result: R,
  code: string,
): void {
  expect(result.ok, JSON.stringify(result)).toBe(false);
  expect((result as { error: string }).error).toBe(code);
}

describeBackends('SDK: execute and the agent calls against a real server', (backend) => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(backend.name);
  });
  afterAll(async () => {
    await w?.close();
  });

  describe('success', () => {
    it('runs a tool and answers data and meta', async () => {
      const result = await w
        .toolgate()
        .execute<{ id: string; title: string }>('open:::getItem', { itemId: 'a b' });
      expect(result).toEqual({
        ok: true,
        data: { id: 'a b', title: 'An item' },
        meta: { tool_id: 'open:::getItem', duration_ms: expect.any(Number), provider: 'toolgate.test' },
        replayed: false,
        idempotencyKey: undefined,
        requestId: expect.any(String),
      });
    });

    it('runs a bare tool name with appId', async () => {
      const result = await w.toolgate().execute('createItem', { body: { title: 'T' } }, { appId: 'open' });
      expect(result.ok && result.data).toEqual({ id: 'item-1', title: 'T' });
      expect(result.ok && result.meta.tool_id).toBe('open:::createItem');
    });

    it('lists tools with their schemas', async () => {
      const result = await w.toolgate().listTools({ appId: 'demo' });
      if (!result.ok) throw new Error(failureMessage(result));
      const me = result.tools.find((t) => t.toolId === 'demo:::getMe');
      expect(me).toMatchObject({
        appId: 'demo',
        name: 'getMe',
        requiresUserAuth: true,
        scopes: ['profile:read'],
      });
      const all = await w.toolgate().listTools();
      expect(all.ok && all.tools.some((t) => t.toolId === 'open:::getItem')).toBe(true);
    });

    it('sends the contract headers and no user id unless given', async () => {
      const { fetch, sent } = recordingFetch();
      await w.toolgate({ fetch }).execute('open:::echo', {});
      await w
        .toolgate({ fetch, userId: 'ada' })
        .execute('open:::echo', {}, { idempotencyKey: 'k-headers-1' });
      expect(sent[0]?.headers.get('authorization')).toBe(`Bearer ${w.agent.apiKey}`);
      expect(sent[0]?.headers.get('x-service-client-id')).toBe(w.agent.clientId);
      expect(sent[0]?.headers.has('x-service-user-id')).toBe(false);
      expect(sent[0]?.headers.has('x-service-idempotency-key')).toBe(false);
      expect(sent[1]?.headers.get('x-service-user-id')).toBe('ada');
      expect(sent[1]?.headers.get('x-service-idempotency-key')).toBe('k-headers-1');
      expect(JSON.parse(sent[1]?.body ?? '')).toEqual({ toolId: 'open:::echo', parameters: {} });
    });
  });

  describe('every contract error is a typed value', () => {
    it('invalid_api_key', async () => {
      const result = await w.toolgate({ apiKey: 'tg_key_wrong' }).execute('open:::getItem', { itemId: '1' });
      expectError(result, 'invalid_api_key');
      if (!result.ok && result.error === 'invalid_api_key') {
        expect(result.status).toBe(401);
        expect(result.body).toEqual({ ok: false, error: 'invalid_api_key', message: expect.any(String) });
      }
    });

    it('invalid_client', async () => {
      const result = await w
        .toolgate({ clientId: 'cli_someoneelse' })
        .execute('open:::getItem', { itemId: '1' });
      expectError(result, 'invalid_client');
      expect(!result.ok && 'status' in result && result.status).toBe(401);
    });

    it('tool_not_found, with the tool id', async () => {
      const result = await w.toolgate().execute('open:::noSuchTool', {});
      if (result.ok || result.error !== 'tool_not_found') throw new Error(JSON.stringify(result));
      expect(result.status).toBe(404);
      expect(result.body.tool_id).toBe('open:::noSuchTool');
    });

    it('invalid_parameters, with issues at JSON Pointers', async () => {
      const result = await w.toolgate().execute('open:::listItems', { limit: '5', nope: 1 });
      if (result.ok || result.error !== 'invalid_parameters') throw new Error(JSON.stringify(result));
      expect(result.status).toBe(400);
      expect(result.body.tool_id).toBe('open:::listItems');
      expect(result.body.issues.map((i) => i.path).sort()).toEqual(['/limit', '/nope']);
      // The one sentence says what is wrong where, not only that something is (issue 28).
      const said = result.body.issues.map((i) => `${i.path}: ${i.message.replace(/\.$/, '')}`).join('; ');
      expect(failureMessage(result)).toBe(`The parameters do not match the tool (${said}).`);
      expect(failureMessage(result)).toMatch(/\/limit: Must be an integer[;)]/);
    });

    it('rbac_denied, naming the missing scope', async () => {
      const narrow = await w.newAgent(['tools:execute:demo']);
      const result = await w
        .toolgate({ apiKey: narrow.apiKey, clientId: narrow.clientId })
        .execute('open:::getItem', { itemId: '1' });
      if (result.ok || result.error !== 'rbac_denied') throw new Error(JSON.stringify(result));
      expect(result.status).toBe(403);
      expect(result.body).toMatchObject({ reason: 'scope_missing', scope: 'tools:execute:open' });
    });

    it('upstream_error, with the upstream status and body', async () => {
      const result = await w.toolgate().execute('open:::getStatus', { code: 503 });
      if (result.ok || result.error !== 'upstream_error') throw new Error(JSON.stringify(result));
      expect(result.status).toBe(502);
      expect(result.body.upstream_status).toBe(503);
      expect(JSON.parse(result.body.upstream_body)).toEqual({ error: 'status 503', code: 503 });
    });

    it('auth_required for a user without a grant, with app_id and no reauth flag', async () => {
      const result = await w.toolgate().execute('demo:::getMe', {}, { userId: 'nobody-yet' });
      if (result.ok || result.error !== 'auth_required') throw new Error(JSON.stringify(result));
      expect(result.status).toBe(401);
      expect(result.body).toEqual({
        ok: false,
        error: 'auth_required',
        message: expect.any(String),
        auth_endpoint: '/initiateOAuth',
        app_id: 'demo',
      });
      expect(isApiError(result, 'auth_required')).toBe(true);
      expect(isApiError(result, 'rbac_denied')).toBe(false);
    });

    it('invalid_request when a user tool gets no user id', async () => {
      const result = await w.toolgate().execute('demo:::getMe', {});
      expectError(result, 'invalid_request');
    });

    it('idempotency_key_reused for another request under a used key', async () => {
      const toolgate = w.toolgate();
      const first = await toolgate.execute('open:::getItem', { itemId: '1' }, { idempotencyKey: 'reuse-1' });
      expect(first.ok).toBe(true);
      const second = await toolgate.execute('open:::getItem', { itemId: '2' }, { idempotencyKey: 'reuse-1' });
      expectError(second, 'idempotency_key_reused');
    });

    it('initiateOAuth: redirect_uri_mismatch and app_not_found', async () => {
      const toolgate = w.toolgate();
      const mismatch = await toolgate.initiateOAuth({
        appId: 'demo',
        userId: 'u',
        clientRedirectUri: 'https://elsewhere.example/cb',
      });
      expectError(mismatch, 'redirect_uri_mismatch');
      const unknown = await toolgate.initiateOAuth({
        appId: 'ghost',
        userId: 'u',
        clientRedirectUri: w.receiver.url,
      });
      if (unknown.ok || unknown.error !== 'app_not_found') throw new Error(JSON.stringify(unknown));
      expect(unknown.body.app_id).toBe('ghost');
    });

    it('connections: list, delete, and rbac_denied without connections:read', async () => {
      const toolgate = w.toolgate();
      const listed = await toolgate.listConnections({ userId: 'nobody' });
      expect(listed).toEqual({ ok: true, connections: [], requestId: expect.any(String) });
      const deleted = await toolgate.deleteConnection('demo', { userId: 'nobody' });
      expectError(deleted, 'not_found');
      const blind = await w.newAgent(['tools:execute']);
      const refused = await w
        .toolgate({ apiKey: blind.apiKey, clientId: blind.clientId })
        .listConnections({ userId: 'nobody' });
      if (refused.ok || refused.error !== 'rbac_denied') throw new Error(JSON.stringify(refused));
      expect(refused.body.scope).toBe('connections:read');
    });
  });

  describe('failures outside the contract are typed kinds of their own', () => {
    it('network_error when nothing listens', async () => {
      const port = await freePort();
      const result = await w
        .toolgate({ baseUrl: `http://127.0.0.1:${port}` })
        .execute('open:::getItem', { itemId: '1' });
      if (result.ok || result.error !== 'network_error') throw new Error(JSON.stringify(result));
      expect(result.timedOut).toBe(false);
      expect(result.message).toMatch(/ECONNREFUSED/);
    });

    it('network_error with timedOut after the client time-out', async () => {
      const result = await w.toolgate({ timeoutMs: 100 }).execute('open:::slow', { ms: 2_000 });
      if (result.ok || result.error !== 'network_error') throw new Error(JSON.stringify(result));
      expect(result.timedOut).toBe(true);
    });

    it('aborted when the signal fires mid-call, with its reason', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('user left')), 100);
      const result = await w.toolgate().execute('open:::slow', { ms: 2_000 }, { signal: controller.signal });
      if (result.ok || result.error !== 'aborted') throw new Error(JSON.stringify(result));
      expect((result.reason as Error).message).toBe('user left');
    });

    it('unexpected_response for an answer that is not the contract (e.g. a proxy page)', async () => {
      const html: typeof fetch = async () =>
        new Response('<html>Bad Gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } });
      const result = await w.toolgate({ fetch: html }).execute('open:::getItem', { itemId: '1' });
      if (result.ok || result.error !== 'unexpected_response') throw new Error(JSON.stringify(result));
      expect(result.status).toBe(502);
      expect(result.text).toContain('Bad Gateway');
    });

    it('unexpected_response when a code comes with another status than the table', async () => {
      const wrong: typeof fetch = async () =>
        Response.json({ ok: false, error: 'invalid_api_key', message: 'x' }, { status: 500 });
      const result = await w.toolgate({ fetch: wrong }).execute('open:::getItem', { itemId: '1' });
      expectError(result, 'unexpected_response');
    });
  });

  describe('idempotency through the SDK', () => {
    // Count only this test's own creations: a late `open:::slow` call of an earlier test (its
    // client gave up, the server still runs it) may reach the upstream at any time.
    const creations = (title: string) =>
      w.upstream.requests.filter(
        (r) => r.method === 'POST' && r.path.endsWith('/items') && r.body.includes(JSON.stringify(title)),
      ).length;

    it('a repeat with the same key is replayed and the upstream is hit once', async () => {
      const toolgate = w.toolgate();
      const first = await toolgate.execute(
        'open:::createItem',
        { body: { title: 'once' } },
        { idempotencyKey: 'idem-1' },
      );
      const again = await toolgate.execute(
        'open:::createItem',
        { body: { title: 'once' } },
        { idempotencyKey: 'idem-1' },
      );
      expect(first.ok && first.replayed).toBe(false);
      expect(again.ok && again.replayed).toBe(true);
      expect(again.ok && again.data).toEqual(first.ok && first.data);
      expect(creations('once')).toBe(1);
    });

    it('a lost answer is resent with the same key and replayed, never run twice', async () => {
      let dropped = 0;
      const losing: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        if (dropped === 0) {
          dropped += 1;
          await response.arrayBuffer(); // the server ran it; the answer is lost on the way back
          throw new TypeError('fetch failed', {
            cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
          });
        }
        return response;
      };
      const { fetch: recording, sent } = recordingFetch(losing);
      const result = await w
        .toolgate({ fetch: recording })
        .execute('open:::createItem', { body: { title: 'lost' } }, { retries: 2 });
      expect(result.ok && result.replayed).toBe(true);
      expect(creations('lost')).toBe(1);
      expect(sent).toHaveLength(2);
      const keys = sent.map((s) => s.headers.get('x-service-idempotency-key'));
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(keys[1]).toBe(keys[0]);
      expect(result.ok && result.idempotencyKey).toBe(keys[0]);
    });

    it('without retries nothing is resent', async () => {
      const failing: typeof fetch = async () => {
        throw new TypeError('fetch failed');
      };
      const { fetch: recording, sent } = recordingFetch(failing);
      const result = await w.toolgate({ fetch: recording }).execute('open:::getItem', { itemId: '1' });
      expectError(result, 'network_error');
      expect(sent).toHaveLength(1);
    });
  });
});

describe('SDK: failureMessage', () => {
  it('spells out five issues and counts the rest; a body without issues is its message', () => {
    const issues = Array.from({ length: 7 }, (_, i) => ({ path: `/p${i}`, message: `bad ${i}` }));
    const failure = (body: ErrorBody) =>
      ({ ok: false, error: body.error, status: 400, body, requestId: undefined }) as ApiError;
    expect(
      failureMessage(
        failure({
          ok: false,
          error: 'invalid_request',
          message: 'The request does not have the expected shape.',
          issues: [{ path: '', message: 'Malformed JSON' }, ...issues],
        }),
      ),
    ).toBe(
      'The request does not have the expected shape ((body): Malformed JSON; /p0: bad 0; /p1: bad 1; /p2: bad 2; /p3: bad 3; 3 more).',
    );
    expect(
      failureMessage(failure({ ok: false, error: 'not_found', message: 'No client has this id.' })),
    ).toBe('No client has this id.');
  });
});

describe('SDK: argument checks throw ToolgateArgumentError, never reach the network', () => {
  const base = { baseUrl: 'http://127.0.0.1:9', apiKey: 'k', clientId: 'c' };
  it.each([
    [
      'a missing baseUrl',
      () => new Toolgate({ ...base, baseUrl: '' }),
      'ERR_INVALID_ARG_TYPE',
      /options\.baseUrl/,
    ],
    [
      'a baseUrl of another scheme',
      () => new Toolgate({ ...base, baseUrl: 'ftp://x' }),
      'ERR_INVALID_ARG_VALUE',
      /http/,
    ],
    [
      'no apiKey',
      () => new Toolgate({ ...base, apiKey: undefined as unknown as string }),
      'ERR_INVALID_ARG_TYPE',
      /apiKey/,
    ],
  ])('%s', (_label, make, code, message) => {
    try {
      make();
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ToolgateArgumentError);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as ToolgateArgumentError).code).toBe(code);
      expect((error as Error).message).toMatch(message);
    }
  });

  it('rejects bad call arguments', async () => {
    const toolgate = new Toolgate(base);
    await expect(toolgate.execute('', {})).rejects.toThrow(/"toolId"/);
    await expect(toolgate.execute('a:::b', [] as unknown as Record<string, unknown>)).rejects.toThrow(
      /"parameters"/,
    );
    await expect(toolgate.execute('a:::b', {}, { idempotencyKey: 'é' })).rejects.toThrow(/idempotencyKey/);
    await expect(toolgate.listConnections({})).rejects.toThrow(/userId/);
  });
});
