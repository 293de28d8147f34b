// Over /trpc every failure carries its contract code (docs/reference.md "Calling conventions"), and a caller's mistake is
// logged as routine (info, no stack), never as our failure.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionAgent } from '../support/agent.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

describe('tRPC: a caller’s mistakes carry their contract code', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer('pglite', { env: { MAX_BODY_BYTES: '2048' } });
  });
  afterAll(async () => {
    await server?.close();
  });

  const json = { 'content-type': 'application/json' };

  it.each([
    [
      'an unknown procedure',
      'POST',
      '/trpc/admin.createClient',
      { body: { name: 'x' } },
      404,
      { ok: false, error: 'not_found', message: 'No such procedure.' },
    ],
    [
      'a body that is not JSON',
      'POST',
      '/trpc/admin.clients.create',
      { raw: 'name=x', headers: { 'content-type': 'text/plain' } },
      415,
      { ok: false, error: 'unsupported_media_type', message: 'The body must be application/json.' },
    ],
    [
      'a mutation sent as GET',
      'GET',
      '/trpc/admin.clients.create',
      {},
      405,
      { ok: false, error: 'method_not_allowed', message: 'This method is not allowed on this procedure.' },
    ],
    [
      'a query sent as POST',
      'POST',
      '/trpc/admin.clients.list',
      { body: {} },
      405,
      { ok: false, error: 'method_not_allowed', message: 'This method is not allowed on this procedure.' },
    ],
    [
      'a query input that is not JSON',
      'GET',
      '/trpc/admin.clients.list?input=%7Bnot-json',
      {},
      400,
      {
        ok: false,
        error: 'invalid_request',
        message: 'The input is not valid JSON.',
        issues: [{ path: '', message: 'Malformed JSON.' }],
      },
    ],
    [
      'a malformed JSON body',
      'POST',
      '/trpc/admin.clients.create',
      { raw: '{"name":', headers: json },
      400,
      {
        ok: false,
        error: 'invalid_request',
        message: 'The body is not valid JSON.',
        issues: [{ path: '', message: 'Malformed JSON.' }],
      },
    ],
    [
      'a body over MAX_BODY_BYTES',
      'POST',
      '/trpc/admin.clients.create',
      { raw: JSON.stringify({ name: 'x'.repeat(4096) }), headers: json },
      413,
      { ok: false, error: 'payload_too_large', message: 'The body is larger than 2048 bytes.', limit: 2048 },
    ],
    [
      'an input of the wrong shape',
      'POST',
      '/trpc/admin.clients.create',
      { body: {} },
      400,
      {
        ok: false,
        error: 'invalid_request',
        message: 'The request does not have the expected shape.',
        issues: [{ path: '/name', message: 'Required value is missing.' }],
      },
    ],
  ])('%s', async (_label, method, path, options, status, contract) => {
    const before = server.logs.length;
    const reply = await call(server.url, method, path, { key: server.adminKey, ...options });
    expect(reply.status).toBe(status);
    expect(reply.body.error.data).toEqual({ contract });
    expect(reply.body.error.message).toBe(contract.message);
    expect(reply.text).not.toMatch(/stack|\bat \//);
    const lines = server.logs.slice(before).map((line) => JSON.parse(line));
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(JSON.stringify(lines)).not.toContain('"stack"');
  });

  // A procedure's refusal (an ApiProblem, thrown by a router or its sign-in) keeps its status and
  // its tRPC code over /trpc: the contractErrors middleware of trpc.ts maps it, the formatter writes it.
  it("answers a procedure's contract error with its status, its tRPC code and the contract body", async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    const envelope = (code: number, contract: Record<string, unknown>) => ({
      error: { message: contract.message, code, data: { contract } },
    });
    const cases: Array<[string, string, Record<string, string>, number, number, Record<string, unknown>]> = [
      [
        'no key',
        '/trpc/tools.list',
        {},
        401,
        -32001,
        {
          ok: false,
          error: 'invalid_api_key',
          message: 'The API key is missing, malformed, unknown or revoked.',
        },
      ],
      [
        'another client',
        '/trpc/tools.list',
        { authorization: `Bearer ${agent.apiKey}`, 'x-service-client-id': 'cli_someoneelse' },
        401,
        -32001,
        {
          ok: false,
          error: 'invalid_client',
          message: 'X-Service-Client-Id is missing, unknown, or not the client this key was issued to.',
        },
      ],
      [
        'an agent key on an admin procedure',
        '/trpc/admin.clients.list',
        { authorization: `Bearer ${agent.apiKey}` },
        403,
        -32003,
        {
          ok: false,
          error: 'rbac_denied',
          message: 'This API key lacks the scope admin.',
          reason: 'scope_missing',
          scope: 'admin',
        },
      ],
      [
        'an unknown app',
        `/trpc/admin.apps.get?input=${encodeURIComponent('{"appId":"nope"}')}`,
        { authorization: `Bearer ${server.adminKey}` },
        404,
        -32004,
        { ok: false, error: 'app_not_found', message: 'No app nope is registered.', app_id: 'nope' },
      ],
    ];
    for (const [what, path, headers, status, code, contract] of cases) {
      const reply = await call(server.url, 'GET', path, { headers });
      expect([what, reply.status, reply.body]).toEqual([what, status, envelope(code, contract)]);
    }
  });

  // Issue 23: one GET of 200 batched tools.list calls ran 61 s and grew the server past 1.8 GB.
  it('refuses a batch of more than 10 calls before running any, and runs one of 10', async () => {
    const batch = (n: number) =>
      `/trpc/${Array(n).fill('admin.clients.list').join(',')}?batch=1&input=${encodeURIComponent(
        JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [i, {}]))),
      )}`;
    const before = server.logs.length;
    const refused = await call(server.url, 'GET', batch(200), { key: server.adminKey });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      error: {
        message: 'A batch may hold at most 10 calls.',
        code: -32600,
        data: {
          contract: {
            ok: false,
            error: 'invalid_request',
            message: 'A batch may hold at most 10 calls.',
            issues: [{ path: '', message: 'This batch holds 200 calls.' }],
          },
        },
      },
    });
    const lines = server.logs.slice(before).map((line) => JSON.parse(line));
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    const eleven = await call(server.url, 'GET', batch(11), { key: server.adminKey });
    expect(eleven.body.error.data.contract.issues).toEqual([
      { path: '', message: 'This batch holds 11 calls.' },
    ]);
    const ten = await call(server.url, 'GET', batch(10), { key: server.adminKey });
    expect(ten.status).toBe(200);
    expect(ten.body).toHaveLength(10);
    expect(ten.body[9]).toEqual({ result: { data: { clients: expect.any(Array) } } });
  });

  it('runs a query sent without input as one with {} (its REST twin takes no input either)', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    const cases: Array<[string, Record<string, string>, unknown]> = [
      ['admin.clients.list', { authorization: `Bearer ${server.adminKey}` }, { clients: expect.any(Array) }],
      ['admin.apps.list', { authorization: `Bearer ${server.adminKey}` }, { apps: [] }],
      [
        'tools.list',
        { authorization: `Bearer ${agent.apiKey}`, 'x-service-client-id': agent.clientId },
        { tools: [] },
      ],
    ];
    for (const [procedure, headers, data] of cases) {
      const reply = await call(server.url, 'GET', `/trpc/${procedure}`, { headers });
      expect([procedure, reply.status, reply.body]).toEqual([procedure, 200, { result: { data } }]);
    }
    // A query whose input has required fields names each missing one, as for `{}`.
    const get = await call(server.url, 'GET', '/trpc/admin.apps.get', { key: server.adminKey });
    expect([get.status, get.body.error.data.contract]).toEqual([
      400,
      {
        ok: false,
        error: 'invalid_request',
        message: 'The request does not have the expected shape.',
        issues: [{ path: '/appId', message: 'Required value is missing.' }],
      },
    ]);
  });

  it('tells a value of the wrong type from a missing one, over tRPC and REST', async () => {
    const expected = {
      ok: false,
      error: 'invalid_request',
      message: 'The request does not have the expected shape.',
      issues: [{ path: '/name', message: 'Invalid input: expected string, received number.' }],
    };
    const trpc = await call(server.url, 'POST', '/trpc/admin.clients.create', {
      key: server.adminKey,
      body: { name: 5 },
    });
    expect([trpc.status, trpc.body.error.data.contract]).toEqual([400, expected]);
    const rest = await call(server.url, 'POST', '/admin/clients', {
      key: server.adminKey,
      body: { name: 5 },
    });
    expect([rest.status, rest.body]).toEqual([400, expected]);
  });

  it('logs a refused tRPC call at info, with its contract code', async () => {
    const before = server.logs.length;
    await call(server.url, 'POST', '/trpc/admin.nope', { key: server.adminKey, body: {} });
    const lines = server.logs.slice(before).map((line) => JSON.parse(line));
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 30,
        msg: 'trpc call refused',
        error: 'not_found',
        path: 'admin.nope',
      }),
    );
  });
});
