// Issue 23, item 7: an upstream redirect is followed only to the app's origin AND under its base
// URL's path (docs/reference.md "Agent endpoints"): a base URL `…/v1` admits `…/v1/…` only. Any other
// redirect is not followed (502 upstream_error with the 3xx), so the app's credential never reaches
// another path of the host — not through `/v10`, `..` segments, nor percent-encoded dots or slashes.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Agent, provisionAgent, proxy, registerApp } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';

const API_KEY = 'redirect-scope-key-do-not-leak';

describe('upstream redirects stay under the base path', () => {
  let server: TestServer;
  let upstream: Server;
  let origin: string;
  let agent: Agent;
  const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      const url = new URL(req.url ?? '/', 'http://upstream');
      req.resume();
      if (url.pathname === '/v1/go') {
        res.writeHead(302, { location: url.searchParams.get('to') ?? '/', 'content-length': '0' });
        return res.end();
      }
      const body = JSON.stringify({ path: req.url });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    server = await startServer('pglite');
    agent = await provisionAgent(server, ['tools:execute']);
    await registerApp(server, 'scoped', {
      provider: 'acme.redirects',
      openapi: {
        openapi: '3.1.0',
        info: { title: 'redirects', version: '1' },
        servers: [{ url: `${origin}/v1` }],
        paths: {
          '/go': {
            get: {
              operationId: 'go',
              parameters: [{ name: 'to', in: 'query', required: true, schema: { type: 'string' } }],
              responses: { '200': { description: 'ok' } },
            },
          },
        },
      },
      auth: { type: 'api_key', in: 'header', name: 'X-Api-Key', value: API_KEY },
    });
  });
  afterAll(async () => {
    await server?.close();
    upstream?.closeAllConnections();
    await new Promise((resolve) => upstream?.close(resolve));
  });
  beforeEach(() => {
    seen.length = 0;
  });

  const go = (to: string) => proxy(server, agent, { toolId: 'scoped:::go', parameters: { to } });

  it.each([
    ['an absolute path under the base', '/v1/landing', '/v1/landing'],
    ['a relative path', 'landing?x=1', '/v1/landing?x=1'],
    ['the same origin, written out', '{origin}/v1/deep/er', '/v1/deep/er'],
    ['an encoded slash inside a segment', '/v1/files/a%2Fb', '/v1/files/a%2Fb'],
  ])('follows %s, the credential along', async (_label, to, landed) => {
    const reply = await go(to.replace('{origin}', origin));
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({ path: landed });
    expect(seen.map((request) => new URL(request.url, origin).pathname)).toEqual([
      '/v1/go',
      new URL(landed, origin).pathname,
    ]);
    expect(seen.map((request) => request.headers['x-api-key'])).toEqual([API_KEY, API_KEY]);
  });

  it.each([
    ['another path of the host', '/admin'],
    ['a sibling prefix', '/v10/landing'],
    ['the base path in another case', '/V1/landing'],
    ['a dot-dot segment', '/v1/../admin'],
    ['a relative dot-dot', '../admin'],
    ['percent-encoded dots', '/v1/%2e%2e/admin'],
    ['an encoded slash after dots', '/v1/..%2Fadmin'],
    ['encoded dots and slash', '/v1/%2e%2e%2fadmin'],
    ['double-encoded dots and slash', '/v1/%252e%252e%252fadmin'],
    ['a dot-dot with a matrix parameter', '/v1/..;/admin'],
    ['backslashes', '/v1\\..\\admin'],
    ['a protocol-relative URL', '//{host}/admin'],
    ['another host name for the same server', 'http://localhost:{port}/v1/landing'],
  ])('does not follow %s: 502 with the 3xx, nothing sent there', async (_label, to) => {
    const { host, port } = new URL(origin);
    const reply = await go(to.replace('{host}', host).replace('{port}', port));
    expect(reply.status).toBe(502);
    expect(reply.body).toEqual({
      ok: false,
      error: 'upstream_error',
      message: 'The upstream answered 302.',
      upstream_status: 302,
      upstream_body: '',
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.url.startsWith('/v1/go?')).toBe(true);
  });
});
