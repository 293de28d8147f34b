// Upstream redirects through the real server (docs/reference.md "Agent endpoints"): followed only within the app's origin,
// a bounded number of times (a same-origin loop ends as the 3xx, never a hang), and 301/302/303
// after a POST continue as a GET without the body, as browsers do, while 307/308 keep both.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, provisionAgent, proxy, registerApp } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';

interface Seen {
  method: string;
  url: string;
  body: string;
}

describe('upstream redirects', () => {
  let server: TestServer;
  let upstream: Server;
  let base: string;
  const seen: Seen[] = [];
  let agent: Agent;

  beforeAll(async () => {
    upstream = createServer(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      seen.push({ method: req.method ?? '', url: req.url ?? '', body });
      const url = new URL(req.url ?? '/', 'http://upstream');
      if (url.pathname === '/submit') {
        res.writeHead(Number(url.searchParams.get('status')), { location: '/landing?from=submit' }).end();
      } else if (url.pathname === '/loop') {
        res.writeHead(302, { location: `/loop?n=${Number(url.searchParams.get('n') ?? 0) + 1}` }).end();
      } else if (url.pathname === '/landing') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ method: req.method, body, contentType: req.headers['content-type'] ?? null }),
        );
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

    server = await startServer('pglite', { env: { UPSTREAM_TIMEOUT_MS: '3000' } });
    agent = await provisionAgent(server, ['tools:execute']);
    const openapi = {
      openapi: '3.1.0',
      info: { title: 'redirects', version: '1' },
      servers: [{ url: base }],
      paths: {
        '/submit': {
          post: {
            operationId: 'submit',
            parameters: [{ name: 'status', in: 'query', required: true, schema: { type: 'integer' } }],
            requestBody: {
              required: true,
              content: {
                'application/json': { schema: { type: 'object', properties: { a: { type: 'integer' } } } },
              },
            },
            responses: { '200': { description: 'ok' } },
          },
        },
        '/loop': { get: { operationId: 'loop', responses: { '200': { description: 'ok' } } } },
      },
    };
    await registerApp(server, 'redir', { provider: 'toolgate.test', openapi, auth: { type: 'none' } });
  });
  afterAll(async () => {
    await server?.close();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  const run = (tool: string, parameters: Record<string, unknown>) =>
    proxy(server, agent, { toolId: `redir:::${tool}`, parameters });

  it.each([
    [301, 'GET', ''],
    [302, 'GET', ''],
    [303, 'GET', ''],
    [307, 'POST', '{"a":1}'],
    [308, 'POST', '{"a":1}'],
  ])('after a POST answered %i, continues as %s', async (status, method, body) => {
    seen.length = 0;
    const reply = await run('submit', { status, body: { a: 1 } });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({
      method,
      body,
      contentType: method === 'POST' ? 'application/json' : null,
    });
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      `POST /submit?status=${status}`,
      `${method} /landing?from=submit`,
    ]);
  });

  it('ends a same-origin redirect loop with 502 and the 3xx, after a bounded number of hops', async () => {
    seen.length = 0;
    const reply = await run('loop', {});
    expect(reply.status).toBe(502);
    expect(reply.body).toEqual({
      ok: false,
      error: 'upstream_error',
      message: expect.any(String),
      upstream_status: 302,
      upstream_body: '',
    });
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.length).toBeLessThanOrEqual(21);
    expect(seen.every((s) => s.method === 'GET' && s.url.startsWith('/loop'))).toBe(true);
  });
});
