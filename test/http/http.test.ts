import { once } from 'node:events';
import { request } from 'node:http';
import { validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeBackends } from '../support/db.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

describeBackends('HTTP surface', (backend) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(backend.name, { env: { MAX_BODY_BYTES: '2048' } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers /healthz and /readyz', async () => {
    const health = await call(server.url, 'GET', '/healthz');
    expect([health.status, health.body]).toEqual([200, { ok: true }]);
    const ready = await call(server.url, 'GET', '/readyz');
    expect([ready.status, ready.body]).toEqual([200, { ok: true }]);
  });

  it('gives every answer an X-Request-Id, and keeps a sane incoming one', async () => {
    const fresh = await call(server.url, 'GET', '/healthz');
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await call(server.url, 'GET', '/nope', { headers: { 'x-request-id': 'trace-123' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-123');
    const replaced = await call(server.url, 'GET', '/healthz', {
      headers: { 'x-request-id': 'bad id\twith tab' },
    });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(server.logs.join('')).toContain('"requestId":"trace-123"');
  });

  it('puts X-Request-Id once on the answers of every kind of writer', async () => {
    const writers: Array<[string, string, { raw?: string; headers?: Record<string, string> }?]> = [
      ['GET', '/healthz'], // sendJson
      ['HEAD', '/healthz'], // a HEAD answered by a GET route
      ['POST', '/healthz'], // 405 with Allow, written before any handler
      ['GET', '/nope'], // 404
      ['GET', '/metrics'], // writeHead with headers of its own
      ['GET', '/docs'],
      ['GET', '/'], // 302
      ['GET', '/trpc/nope'], // tRPC's adapter, which sets its headers one by one
      ['POST', '/mcp', { raw: '{}', headers: { 'content-type': 'application/json' } }], // the MCP route
      ['POST', '/proxyV2', { raw: 'x'.repeat(4096), headers: { 'content-type': 'application/json' } }], // 413
    ];
    for (const [index, [method, path, options]] of writers.entries()) {
      const id = `trace-${index}`;
      const reply = await call(server.url, method, path, {
        ...options,
        headers: { ...options?.headers, 'x-request-id': id },
        redirect: 'manual',
      });
      expect({ method, path, id: reply.headers.get('x-request-id') }).toEqual({ method, path, id });
    }
  });

  it('answers 404 not_found for an unknown path', async () => {
    for (const path of ['/nope', '/admin', '/admin/clients/x/y/z', '/proxyV3']) {
      const reply = await call(server.url, 'GET', path);
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({ ok: false, error: 'not_found', message: 'No such path.' });
    }
  });

  it('answers 405 method_not_allowed with Allow on a known path', async () => {
    const reply = await call(server.url, 'PATCH', '/admin/clients', { key: server.adminKey, body: {} });
    expect(reply.status).toBe(405);
    expect(reply.body).toEqual({
      ok: false,
      error: 'method_not_allowed',
      message: 'PATCH is not allowed on this path.',
    });
    expect(reply.headers.get('allow')).toBe('POST, GET');
    const health = await call(server.url, 'POST', '/healthz', { body: {} });
    expect(health.status).toBe(405);
    expect(health.body.error).toBe('method_not_allowed');
    const keys = await call(server.url, 'GET', '/admin/api-keys/key_x');
    expect([keys.status, keys.body.error]).toEqual([405, 'method_not_allowed']);
  });

  it('answers 413 payload_too_large with the limit, before authentication', async () => {
    const raw = JSON.stringify({ name: 'x'.repeat(4096) });
    const reply = await call(server.url, 'POST', '/admin/clients', {
      raw,
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).toBe(413);
    expect(reply.body).toEqual({
      ok: false,
      error: 'payload_too_large',
      message: 'The body is larger than 2048 bytes.',
      limit: 2048,
    });
  });

  it('answers 413 for a chunked body that grows past the limit', async () => {
    const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${server.url}/admin/clients`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      for (let i = 0; i < 5; i += 1) req.write('x'.repeat(1000));
      req.end();
    });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body)).toMatchObject({ error: 'payload_too_large', limit: 2048 });
  });

  it('answers 415 unsupported_media_type for a body that is not JSON', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx']) {
      const reply = await call(server.url, 'POST', '/admin/clients', {
        raw: 'name=x',
        headers: { 'content-type': contentType },
        key: server.adminKey,
      });
      expect(reply.status).toBe(415);
      expect(reply.body).toEqual({
        ok: false,
        error: 'unsupported_media_type',
        message: 'The body must be application/json.',
      });
    }
    const withCharset = await call(server.url, 'POST', '/admin/clients', {
      raw: '{"name":"ok"}',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      key: server.adminKey,
    });
    expect(withCharset.status).toBe(200);
  });

  it('answers 400 invalid_request with path "" for malformed JSON', async () => {
    for (const raw of ['{"name":', 'nul', '{"name":"x"} trailing']) {
      const reply = await call(server.url, 'POST', '/admin/clients', {
        raw,
        headers: { 'content-type': 'application/json' },
        key: server.adminKey,
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

  it('treats an empty body as a missing one: the fields are reported missing', async () => {
    const reply = await call(server.url, 'POST', '/admin/clients', {
      raw: '',
      headers: { 'content-type': 'application/json' },
      key: server.adminKey,
    });
    expect(reply.status).toBe(400);
    expect(reply.body.issues).toEqual([{ path: '/name', message: 'Required value is missing.' }]);
  });

  it('serves /openapi.json as a valid OpenAPI 3.1 document of the procedures', async () => {
    const reply = await call(server.url, 'GET', '/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.body.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(reply.body.paths)).toEqual(
      expect.arrayContaining([
        '/admin/clients',
        '/admin/clients/{clientId}/redirect-uris',
        '/admin/clients/{clientId}/api-keys',
        '/admin/api-keys/{keyId}',
      ]),
    );
    expect(Object.keys(reply.body.paths['/admin/clients'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(Object.keys(reply.body.paths)).toEqual(
      expect.arrayContaining([
        '/proxyV2',
        '/tools',
        '/initiateOAuth',
        '/handleOAuthCallback',
        '/connections',
      ]),
    );
    const proxyHeaders = reply.body.paths['/proxyV2'].post.parameters
      .filter((p: { in: string }) => p.in === 'header')
      .map((p: { name: string; required?: boolean }) => [p.name, p.required ?? false]);
    // X-Service-Client-Id is the ClientId security scheme (test/http/docs.test.ts), not a parameter.
    expect(reply.body.paths['/proxyV2'].post.security).toEqual([{ Authorization: [], ClientId: [] }]);
    expect(proxyHeaders).toEqual([
      ['x-service-user-id', false],
      ['x-service-app-id', false],
      ['x-service-idempotency-key', false],
    ]);
    const result = await validate(structuredClone(reply.body));
    expect(result.valid ? [] : result.errors).toEqual([]);
  });

  it('serves /docs as a browsable HTML reference (the page itself: test/http/docs.test.ts)', async () => {
    const reply = await call(server.url, 'GET', '/docs');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(reply.text).toContain('<script src="docs/assets/swagger-ui-bundle.js"></script>');
  });

  it('serves Prometheus metrics labelled by route template', async () => {
    await call(server.url, 'GET', '/admin/clients', { key: server.adminKey });
    const reply = await call(server.url, 'GET', '/metrics');
    expect(reply.status).toBe(200);
    expect(reply.text).toMatch(
      /toolgate_http_requests_total\{route="\/admin\/clients",method="GET",status="200"\} \d+/,
    );
  });

  describe('tRPC transport', () => {
    it('serves the same procedures under /trpc with the contract body in data.contract', async () => {
      const created = await call(server.url, 'POST', '/trpc/admin.clients.create', {
        key: server.adminKey,
        body: { name: 'via trpc' },
      });
      expect(created.status).toBe(200);
      expect(created.body.result.data).toEqual({
        clientId: expect.stringMatching(/^cli_/),
        name: 'via trpc',
        createdAt: expect.any(String),
      });
      const denied = await call(server.url, 'GET', '/trpc/admin.clients.list');
      expect(denied.status).toBe(401);
      expect(denied.body.error.data.contract).toEqual({
        ok: false,
        error: 'invalid_api_key',
        message: 'The API key is missing, malformed, unknown or revoked.',
      });
      expect(JSON.stringify(denied.body)).not.toMatch(/stack|at \//);
    });
  });
});

describeBackends('graceful shutdown', (backend) => {
  it('finishes a request in flight, then refuses new connections and closes the database', async () => {
    const server = await startServer(backend.name);
    const body = JSON.stringify({ name: 'late' });
    // Send the headers and half the body; once the server has the request, start closing, then
    // send the rest (events, not sleeps: a loaded machine may take any time to parse the headers).
    const arrived = once(server.app.server, 'request');
    let sendRest = () => {};
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${server.url}/admin/clients`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${server.adminKey}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      req.write(body.slice(0, 5));
      sendRest = () => req.end(body.slice(5));
    });
    await arrived;
    const closed = server.close();
    sendRest();
    const reply = await answer;
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toMatchObject({ name: 'late' });
    await closed;
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });
});

describe('HEAD', () => {
  it('is GET without a body on read-only paths, and not allowed on the OAuth callback', async () => {
    const server = await startServer('pglite');
    try {
      const health = await fetch(`${server.url}/healthz`, { method: 'HEAD' });
      expect(health.status).toBe(200);
      const callback = await fetch(`${server.url}/handleOAuthCallback?state=x&code=y`, { method: 'HEAD' });
      expect(callback.status).toBe(405);
      expect(callback.headers.get('allow')).toBe('GET');
    } finally {
      await server.close();
    }
  });
});
