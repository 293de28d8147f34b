// Over /trpc every failure carries its contract code (docs/reference.md "Calling conventions"), and a caller's mistake is
// logged as routine (info, no stack), never as our failure.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
