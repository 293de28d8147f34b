/**
 * POST /proxyV2 end to end (docs/reference.md "Calling conventions"–2): every success form and every error row, in the
 * contract's order of checks, against the real server and the real upstream fixture.
 * The rate limit row lives in rate-limit.test.ts (it needs a server of its own).
 */
import { type Dispatcher, getGlobalDispatcher, setGlobalDispatcher, Agent as UndiciAgent } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Agent, provisionAgent, registerApp } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { freePort } from '../support/ports.ts';
import type { TestServer } from '../support/server.ts';
import { PNG_1X1, type Upstream } from '../support/upstream.ts';
import { startWorld, type World } from '../support/world.ts';
import { oauth2Auth } from './helpers.ts';

const TIMEOUT_MS = 2_000;

const INVALID_API_KEY = {
  ok: false,
  error: 'invalid_api_key',
  message: 'The API key is missing, malformed, unknown or revoked.',
};
const INVALID_CLIENT = {
  ok: false,
  error: 'invalid_client',
  message: 'X-Service-Client-Id is missing, unknown, or not the client this key was issued to.',
};
const toolNotFound = (toolId: string) => ({
  ok: false,
  error: 'tool_not_found',
  message: `No tool ${toolId} is registered.`,
  tool_id: toolId,
});
const rbacDenied = (appId: string) => ({
  ok: false,
  error: 'rbac_denied',
  message: `This API key lacks the scope tools:execute:${appId}.`,
  reason: 'scope_missing',
  scope: `tools:execute:${appId}`,
});
const invalidParameters = (toolId: string, issues: { path: string; message: string }[]) => ({
  ok: false,
  error: 'invalid_parameters',
  message: 'The parameters do not match the tool.',
  tool_id: toolId,
  issues,
});
const invalidRequest = (issues: { path: string; message: unknown }[]) => ({
  ok: false,
  error: 'invalid_request',
  message: 'The request does not have the expected shape.',
  issues,
});

describeBackends('POST /proxyV2', (backend) => {
  let world: World<'all' | 'demoOnly' | 'reader'>;
  let server: TestServer;
  let upstream: Upstream;
  let all: Agent;
  let demoOnly: Agent;
  let reader: Agent;

  beforeAll(async () => {
    const closedPort = await freePort();
    world = await startWorld(backend.name, {
      server: { env: { UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS) } },
      upstream: { basePath: '/v1' },
      apps: {
        demo: { provider: 'acme.demo' },
        other: { provider: 'acme.other', openapi: (upstream) => upstream.openapi30 },
        oauthy: { provider: 'acme.oauth', auth: oauth2Auth() },
        closed: { provider: 'acme.closed', extra: { baseUrl: `http://127.0.0.1:${closedPort}/v1` } },
        // .invalid never resolves (RFC 6761).
        nowhere: { provider: 'acme.unreachable', extra: { baseUrl: 'http://toolgate-test.invalid/v1' } },
      },
      agents: { all: ['tools:execute'], demoOnly: ['tools:execute:demo'], reader: ['connections:read'] },
    });
    ({ server, upstream } = world);
    ({ all, demoOnly, reader } = world.agents);
    // https to a plain-HTTP port fails the TLS handshake.
    await registerApp(server, 'badtls', {
      provider: 'acme.unreachable',
      baseUrl: `https://127.0.0.1:${new URL(upstream.url).port}/v1`,
      openapi: upstream.openapi,
      auth: { type: 'none' },
    });
  });
  afterAll(async () => {
    await world?.close();
  });
  beforeEach(() => upstream.reset());

  const run = (
    toolId: string,
    parameters: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) => world.proxy(all, { toolId, parameters }, headers);
  const success = (toolId: string, data: unknown, provider = 'acme.demo') => ({
    ok: true,
    data,
    meta: { tool_id: toolId, duration_ms: expect.any(Number), provider },
  });

  describe('success', () => {
    it('answers a JSON upstream body parsed, with the envelope meta', async () => {
      const reply = await run('demo:::getItem', { itemId: '42' });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      expect(reply.headers.get('x-request-id')).toBeTruthy();
      expect(reply.body).toEqual(success('demo:::getItem', { id: '42', title: 'An item' }));
      expect(Number.isInteger(reply.body.meta.duration_ms)).toBe(true);
      expect(reply.body.meta.duration_ms).toBeGreaterThanOrEqual(0);
      expect(upstream.requests.map((r) => [r.method, r.url])).toEqual([['GET', '/v1/items/42']]);
    });

    it("calls the upstream over connections of its own, not the process's global dispatcher", async () => {
      // The first global fetch() puts Node's bundled undici there: which undici carried the calls
      // (and what they cost) depended on the Node line and on what had run first.
      const seen: string[] = [];
      class Recording extends UndiciAgent {
        override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandlers) {
          seen.push(String(options.origin));
          return super.dispatch(options, handler);
        }
      }
      const previous = getGlobalDispatcher();
      const recording = new Recording();
      setGlobalDispatcher(recording);
      try {
        const reply = await run('demo:::getItem', { itemId: '42' });
        expect([reply.status, reply.body]).toEqual([
          200,
          success('demo:::getItem', { id: '42', title: 'An item' }),
        ]);
        expect(upstream.requests.map((r) => r.url)).toEqual(['/v1/items/42']);
        expect(seen.filter((origin) => origin === upstream.origin)).toEqual([]);
      } finally {
        setGlobalDispatcher(previous);
        await recording.close();
      }
    });

    it('answers 200 for any 2xx upstream status, with the created body', async () => {
      const reply = await run('demo:::createItem', { body: { title: 'T', labels: ['a'] } });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(success('demo:::createItem', { id: 'item-1', title: 'T', labels: ['a'] }));
    });

    it('answers a text/* body as a string', async () => {
      const reply = await run('demo:::getText');
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(success('demo:::getText', 'hello, world'));
    });

    it('answers any other body as content_type and base64', async () => {
      const reply = await run('demo:::getImage');
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(
        success('demo:::getImage', { content_type: 'image/png', base64: PNG_1X1.toString('base64') }),
      );
    });

    it('answers null for an empty 204', async () => {
      const reply = await run('demo:::deleteItem', { itemId: '7' });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(success('demo:::deleteItem', null));
      expect(upstream.requests.map((r) => [r.method, r.url])).toEqual([['DELETE', '/v1/items/7']]);
    });

    it('takes a bare tool name with X-Service-App-Id; meta.tool_id is still composite', async () => {
      const reply = await run('getText', {}, { 'x-service-app-id': 'demo' });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(success('demo:::getText', 'hello, world'));
      const other = await run('getItem', { itemId: 'o' }, { 'x-service-app-id': 'other' });
      expect(other.body).toEqual(success('other:::getItem', { id: 'o', title: 'An item' }, 'acme.other'));
    });

    it('ignores X-Service-App-Id when the toolId is composite', async () => {
      const reply = await run('demo:::getText', {}, { 'x-service-app-id': 'other' });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(success('demo:::getText', 'hello, world'));
    });

    it('counts the whole call in duration_ms', async () => {
      const reply = await run('demo:::slow', { ms: 200 });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(success('demo:::slow', { sleptMs: 200 }));
      expect(Number.isInteger(reply.body.meta.duration_ms)).toBe(true);
      expect(reply.body.meta.duration_ms).toBeGreaterThanOrEqual(195);
      expect(reply.body.meta.duration_ms).toBeLessThan(TIMEOUT_MS);
    });

    it('runs a tool with a tools:execute:<appId> key', async () => {
      const reply = await world.proxy(demoOnly, { toolId: 'demo:::getText', parameters: {} });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(success('demo:::getText', 'hello, world'));
    });
  });

  it('answers 405 method_not_allowed for another method on /proxyV2', async () => {
    const reply = await world.call('GET', '/proxyV2', { key: all.apiKey, clientId: all.clientId });
    expect(reply.status).toBe(405);
    expect(reply.body).toEqual({
      ok: false,
      error: 'method_not_allowed',
      message: 'GET is not allowed on this path.',
    });
    expect(reply.headers.get('allow')).toBe('POST');
  });

  describe('1. API key', () => {
    it.each([
      ['no Authorization', {}],
      ['a non-Bearer scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
      ['an empty bearer', { authorization: 'Bearer ' }],
      ['an unknown key', { authorization: `Bearer tg_key_${'a'.repeat(20)}_${'b'.repeat(43)}` }],
    ])('answers 401 invalid_api_key for %s', async (_label, headers) => {
      const reply = await world.call('POST', '/proxyV2', {
        clientId: all.clientId,
        headers,
        body: { toolId: 'demo:::getText', parameters: {} },
      });
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual(INVALID_API_KEY);
    });

    it('answers 401 invalid_api_key for a revoked key', async () => {
      const agent = await provisionAgent(server, ['tools:execute']);
      expect((await world.proxy(agent, { toolId: 'demo:::getText', parameters: {} })).status).toBe(200);
      await world.call('DELETE', `/admin/api-keys/${agent.keyId}`, { key: server.adminKey });
      const reply = await world.proxy(agent, { toolId: 'demo:::getText', parameters: {} });
      expect([reply.status, reply.body]).toEqual([401, INVALID_API_KEY]);
    });

    it('checks the key before the client and the body', async () => {
      for (const body of [{ parameters: [] }, { toolId: 'nope:::x', parameters: {} }, ['x']]) {
        const reply = await world.call('POST', '/proxyV2', {
          key: 'not-a-key',
          clientId: 'cli_unknown',
          body,
        });
        expect([reply.status, reply.body]).toEqual([401, INVALID_API_KEY]);
      }
    });
  });

  describe('2. client', () => {
    it('answers 401 invalid_client for a missing, unknown or other client id, or the admin key', async () => {
      const body = { toolId: 'demo:::getText', parameters: {} };
      const replies = [
        await world.call('POST', '/proxyV2', { key: all.apiKey, body }),
        await world.call('POST', '/proxyV2', {
          key: all.apiKey,
          clientId: 'cli_unknownunknown00',
          body,
        }),
        await world.call('POST', '/proxyV2', { key: all.apiKey, clientId: demoOnly.clientId, body }),
        await world.call('POST', '/proxyV2', { key: server.adminKey, clientId: all.clientId, body }),
      ];
      for (const reply of replies) expect([reply.status, reply.body]).toEqual([401, INVALID_CLIENT]);
      expect(upstream.requests).toEqual([]);
    });

    it('checks the client before the body', async () => {
      const reply = await world.call('POST', '/proxyV2', {
        key: all.apiKey,
        clientId: reader.clientId,
        body: { parameters: 'x' },
      });
      expect([reply.status, reply.body]).toEqual([401, INVALID_CLIENT]);
    });
  });

  describe('4. body shape', () => {
    it.each([
      ['a missing toolId', { parameters: {} }, [{ path: '/toolId', message: 'Required value is missing.' }]],
      [
        'a toolId of the wrong type',
        { toolId: 5, parameters: {} },
        [{ path: '/toolId', message: expect.any(String) }],
      ],
      ['an empty toolId', { toolId: '', parameters: {} }, [{ path: '/toolId', message: expect.any(String) }]],
      [
        'missing parameters',
        { toolId: 'demo:::getText' },
        [{ path: '/parameters', message: 'Required value is missing.' }],
      ],
      [
        'parameters as an array',
        { toolId: 'demo:::getText', parameters: [] },
        [{ path: '/parameters', message: expect.any(String) }],
      ],
      [
        'parameters as a string',
        { toolId: 'demo:::getText', parameters: 'x' },
        [{ path: '/parameters', message: expect.any(String) }],
      ],
      [
        'parameters as null',
        { toolId: 'demo:::getText', parameters: null },
        [{ path: '/parameters', message: expect.any(String) }],
      ],
      ['a body that is an array', ['demo:::getText'], [{ path: '', message: expect.any(String) }]],
    ])('answers 400 invalid_request for %s', async (_label, body, issues) => {
      const reply = await world.proxy(all, body);
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(invalidRequest(issues));
      expect(upstream.requests).toEqual([]);
    });

    it('answers 400 invalid_request with path "" for malformed JSON', async () => {
      for (const raw of ['{"toolId":', '{"toolId":"demo:::getText","parameters":{}} x']) {
        const reply = await world.call('POST', '/proxyV2', {
          key: all.apiKey,
          clientId: all.clientId,
          raw,
          headers: { 'content-type': 'application/json' },
        });
        expect(reply.status).toBe(400);
        expect(reply.body).toEqual({
          ok: false,
          error: 'invalid_request',
          message: 'The body is not valid JSON.',
          issues: [{ path: '', message: 'Malformed JSON.' }],
        });
      }
    });

    it('answers 415 for a body that is not JSON', async () => {
      const reply = await world.call('POST', '/proxyV2', {
        key: all.apiKey,
        clientId: all.clientId,
        raw: 'toolId=demo:::getText',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(reply.status).toBe(415);
      expect(reply.body).toEqual({
        ok: false,
        error: 'unsupported_media_type',
        message: 'The body must be application/json.',
      });
    });

    it('checks the body shape before the tool', async () => {
      const reply = await world.proxy(all, { toolId: 'nope:::nothing', parameters: 5 });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toBe('invalid_request');
    });
  });

  describe('5. tool exists', () => {
    it.each([
      ['an unknown app', 'nope:::getItem', {}, 'nope:::getItem'],
      ['an unknown tool', 'demo:::nope', {}, 'demo:::nope'],
      ['an empty tool name', 'demo:::', {}, 'demo:::'],
      ['a bare name without X-Service-App-Id', 'getItem', {}, 'getItem'],
      [
        'a bare name with an unknown X-Service-App-Id',
        'getItem',
        { 'x-service-app-id': 'nope' },
        'nope:::getItem',
      ],
      ['a bare unknown name with X-Service-App-Id', 'nope', { 'x-service-app-id': 'demo' }, 'demo:::nope'],
      ['a tool of another app', 'other:::deleteItem', {}, 'other:::deleteItem'],
    ])('answers 404 tool_not_found for %s', async (_label, toolId, headers, shown) => {
      const reply = await run(toolId, { itemId: '1' }, headers);
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual(toolNotFound(shown));
      expect(upstream.requests).toEqual([]);
    });

    it('checks the tool before the caller scope', async () => {
      const reply = await world.proxy(reader, { toolId: 'nope:::getItem', parameters: {} });
      expect([reply.status, reply.body]).toEqual([404, toolNotFound('nope:::getItem')]);
    });
  });

  describe('6. caller scope', () => {
    it('answers 403 rbac_denied naming tools:execute:<appId>', async () => {
      const otherApp = await world.proxy(demoOnly, {
        toolId: 'other:::getItem',
        parameters: { itemId: '1' },
      });
      expect([otherApp.status, otherApp.body]).toEqual([403, rbacDenied('other')]);
      const bare = await world.proxy(
        demoOnly,
        { toolId: 'getItem', parameters: { itemId: '1' } },
        { 'x-service-app-id': 'other' },
      );
      expect([bare.status, bare.body]).toEqual([403, rbacDenied('other')]);
      const noExecute = await world.proxy(reader, { toolId: 'demo:::getText', parameters: {} });
      expect([noExecute.status, noExecute.body]).toEqual([403, rbacDenied('demo')]);
      expect(upstream.requests).toEqual([]);
    });

    it('checks the scope before the parameters', async () => {
      const reply = await world.proxy(reader, { toolId: 'demo:::getItem', parameters: { nope: 1 } });
      expect([reply.status, reply.body]).toEqual([403, rbacDenied('demo')]);
      const oauth = await world.proxy(demoOnly, { toolId: 'oauthy:::getMe', parameters: { x: 1 } });
      expect([oauth.status, oauth.body]).toEqual([403, rbacDenied('oauthy')]);
    });
  });

  describe('7. parameters', () => {
    it.each([
      [
        'a missing path parameter',
        'demo:::getItem',
        {},
        [{ path: '/itemId', message: 'Required parameter "itemId" is missing.' }],
      ],
      [
        'a missing body',
        'demo:::createItem',
        {},
        [{ path: '/body', message: 'The request body is required.' }],
      ],
      [
        'a missing body property',
        'demo:::createItem',
        { body: {} },
        [{ path: '/body/title', message: 'Required property "title" is missing.' }],
      ],
      [
        'a string for an integer',
        'demo:::listItems',
        { limit: '5' },
        [{ path: '/limit', message: 'Must be an integer.' }],
      ],
      [
        'a number out of range',
        'demo:::listItems',
        { limit: 101 },
        [{ path: '/limit', message: 'Must be at most 100.' }],
      ],
      [
        'a comma list for an array',
        'demo:::listItems',
        { tags: 'a,b' },
        [{ path: '/tags', message: 'Must be an array.' }],
      ],
      [
        'an unknown name',
        'demo:::listItems',
        { foo: 1 },
        [{ path: '/foo', message: 'Unknown parameter "foo": the tool has no parameter of that name.' }],
      ],
      [
        'a wrong array item in the body',
        'demo:::createItem',
        { body: { title: 'T', labels: ['a', 2] } },
        [{ path: '/body/labels/1', message: 'Must be a string.' }],
      ],
      [
        'an unknown body property',
        'demo:::createItem',
        { body: { title: 'T', extra: true } },
        [{ path: '/body/extra', message: 'Unknown property "extra": the schema does not allow it.' }],
      ],
      [
        'a body the tool does not take',
        'demo:::getText',
        { body: {} },
        [{ path: '/body', message: 'Unknown parameter "body": the tool has no parameter of that name.' }],
      ],
      [
        'an enum miss',
        'demo:::listOrgRepos',
        { org: 'o', sort: 'size' },
        [{ path: '/sort', message: 'Must be one of "name", "created".' }],
      ],
      [
        'a null for a string',
        'demo:::getItem',
        { itemId: null },
        [{ path: '/itemId', message: 'Must be a string.' }],
      ],
    ])('answers 400 invalid_parameters for %s', async (_label, toolId, parameters, issues) => {
      const reply = await run(toolId, parameters);
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(invalidParameters(toolId, issues));
      expect(upstream.requests).toEqual([]);
    });

    it('refuses a parameter named __proto__ as unknown, and it never reaches the upstream', async () => {
      const reply = await run('demo:::echo', JSON.parse('{"__proto__":{"q":"polluted"},"X-Trace-Id":"t"}'));
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(
        invalidParameters('demo:::echo', [
          {
            path: '/__proto__',
            message: 'Unknown parameter "__proto__": the tool has no parameter of that name.',
          },
        ]),
      );
      expect(upstream.requests).toEqual([]);
    });

    it('refuses a body property named __proto__ where the schema is closed', async () => {
      const parameters = JSON.parse('{"body":{"title":"T","__proto__":{"labels":"polluted"}}}');
      const reply = await run('demo:::createItem', parameters);
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(
        invalidParameters('demo:::createItem', [
          { path: '/body/__proto__', message: 'Unknown property "__proto__": the schema does not allow it.' },
        ]),
      );
      expect(upstream.requests).toEqual([]);
    });

    it('reports every problem at once, and the composite tool_id for a bare name', async () => {
      const reply = await run('getItem', { fields: 'a', bogus: 1 }, { 'x-service-app-id': 'demo' });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(
        invalidParameters('demo:::getItem', [
          { path: '/itemId', message: 'Required parameter "itemId" is missing.' },
          { path: '/bogus', message: 'Unknown parameter "bogus": the tool has no parameter of that name.' },
          { path: '/fields', message: 'Must be an array.' },
        ]),
      );
    });

    it('checks the parameters before the user authorization', async () => {
      const noUser = await run('oauthy:::getMe', { nope: true });
      expect([noUser.status, noUser.body]).toEqual([
        400,
        invalidParameters('oauthy:::getMe', [
          { path: '/nope', message: 'Unknown parameter "nope": the tool has no parameter of that name.' },
        ]),
      ]);
      const noGrant = await run('oauthy:::getMe', { nope: true }, { 'x-service-user-id': 'u-1' });
      expect(noGrant.status).toBe(400);
      expect(noGrant.body.error).toBe('invalid_parameters');
    });
  });

  describe('8. idempotency', () => {
    const badKey = { 'x-service-idempotency-key': 'k'.repeat(256) };

    it('checks the parameters before the idempotency key', async () => {
      const reply = await run('demo:::getItem', {}, badKey);
      expect(reply.status).toBe(400);
      expect(reply.body.error).toBe('invalid_parameters');
    });

    it('checks the idempotency key before the user authorization', async () => {
      const reply = await run('oauthy:::getMe', {}, { ...badKey, 'x-service-user-id': 'u-1' });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({
        ok: false,
        error: 'invalid_request',
        message: expect.any(String),
        issues: [{ path: expect.any(String), message: expect.any(String) }],
      });
      expect(upstream.requests).toEqual([]);
    });
  });

  describe('9. user authorization', () => {
    it('answers 400 invalid_request without X-Service-User-Id and 401 auth_required without a grant', async () => {
      const noUser = await run('oauthy:::getMe');
      expect(noUser.status).toBe(400);
      expect(noUser.body).toEqual({
        ok: false,
        error: 'invalid_request',
        message: expect.any(String),
        issues: [{ path: expect.any(String), message: expect.any(String) }],
      });
      const noGrant = await run('oauthy:::getMe', {}, { 'x-service-user-id': 'u-1' });
      expect(noGrant.status).toBe(401);
      expect(noGrant.body).toEqual({
        ok: false,
        error: 'auth_required',
        message: expect.any(String),
        auth_endpoint: '/initiateOAuth',
        app_id: 'oauthy',
      });
      expect(upstream.requests).toEqual([]);
    });
  });

  describe('10. upstream', () => {
    it('answers 502 upstream_error with the upstream status and body', async () => {
      for (const code of [400, 404, 409, 500, 503]) {
        const reply = await run('demo:::getStatus', { code });
        expect(reply.status).toBe(502);
        expect(reply.body).toEqual({
          ok: false,
          error: 'upstream_error',
          message: `The upstream answered ${code}.`,
          upstream_status: code,
          upstream_body: JSON.stringify({ error: `status ${code}`, code }),
        });
      }
    });

    it('answers a 3xx that is not a redirect it can follow as upstream_error', async () => {
      const reply = await run('demo:::getStatus', { code: 301 });
      expect(reply.status).toBe(502);
      expect(reply.body).toMatchObject({ error: 'upstream_error', upstream_status: 301 });
    });

    it('cuts upstream_body to the first 65,536 bytes', async () => {
      const reply = await run('demo:::getStatus', { code: 500, size: 100 * 1024 });
      expect(reply.status).toBe(502);
      expect(reply.body).toEqual({
        ok: false,
        error: 'upstream_error',
        message: 'The upstream answered 500.',
        upstream_status: 500,
        upstream_body: 'x'.repeat(65_536),
      });
      expect(Buffer.byteLength(reply.body.upstream_body)).toBe(65_536);
      const small = await run('demo:::getStatus', { code: 500, size: 65_535 });
      expect(small.body.upstream_body).toHaveLength(65_535);
      const exact = await run('demo:::getStatus', { code: 500, size: 65_536 });
      expect(exact.body.upstream_body).toHaveLength(65_536);
      const empty = await run('demo:::getStatus', { code: 500, size: 0 });
      expect(empty.body).toMatchObject({ upstream_status: 500, upstream_body: '' });
    });

    it('answers 504 upstream_timeout when the upstream is slower than UPSTREAM_TIMEOUT_MS', async () => {
      const started = performance.now();
      const reply = await run('demo:::slow', { ms: 5_000 });
      const elapsed = performance.now() - started;
      expect(reply.status).toBe(504);
      expect(reply.body).toEqual({
        ok: false,
        error: 'upstream_timeout',
        message: 'The upstream did not answer in time.',
      });
      expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(elapsed).toBeLessThan(TIMEOUT_MS + 5_000);
      expect(upstream.requests.map((r) => r.url)).toEqual(['/v1/slow?ms=5000']);
    });

    it('answers 502 upstream_unreachable when the connection is refused, with its cause', async () => {
      const reply = await run('closed:::getText');
      expect(reply.status).toBe(502);
      expect(reply.body).toEqual({
        ok: false,
        error: 'upstream_unreachable',
        message: 'The upstream could not be reached: the connection was refused.',
      });
    });

    it('names the cause of upstream_unreachable for a name that does not resolve and for a TLS failure', async () => {
      expect((await run('nowhere:::getText')).body).toEqual({
        ok: false,
        error: 'upstream_unreachable',
        message: 'The upstream could not be reached: its host name does not resolve.',
      });
      expect((await run('badtls:::getText')).body).toEqual({
        ok: false,
        error: 'upstream_unreachable',
        message: 'The upstream could not be reached: the TLS handshake failed (certificate or protocol).',
      });
    });

    it('never answers 500 and never shows internals in an error', async () => {
      const replies = [
        await run('demo:::getStatus', { code: 500 }),
        await run('closed:::getText'),
        await run('a:::b:::c'),
        await run(`${'x'.repeat(300)}:::y`),
        await world.proxy(all, { toolId: 'x'.repeat(401), parameters: {} }),
      ];
      for (const reply of replies) {
        expect(reply.status).not.toBe(500);
        expect(reply.status).toBeGreaterThanOrEqual(400);
        expect(reply.text).not.toMatch(/\bat .+\.ts:\d+|ECONNREFUSED|stack|prisma/i);
      }
    });
  });
});
