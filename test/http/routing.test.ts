import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRouteTable, parseTarget } from '../../server/http/route-table.ts';
import { createRoutes } from '../../server/http/routes.ts';
import { createMetrics } from '../../server/metrics.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

const NOT_FOUND = { ok: false, error: 'not_found', message: 'No such path.' };
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** One request with the request target sent exactly as given (fetch would resolve `//x/…` as a host). */
function raw(
  baseUrl: string,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: unknown }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, method, path: target, headers }, (res) => {
      let text = '';
      res.on('data', (chunk) => {
        text += chunk;
      });
      res.on('end', () => {
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {}
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('routing edges', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer('pglite');
  });
  afterAll(async () => {
    await server?.close();
  });

  const admin = () => ({ authorization: `Bearer ${server.adminKey}`, 'content-type': 'application/json' });

  it('reads the request target as a path: //x/proxyV2 is not /proxyV2', async () => {
    for (const target of ['//x/proxyV2', '//localhost/proxyV2', '//x/admin/clients']) {
      const reply = await raw(server.url, 'POST', target, admin(), '{"name":"n"}');
      expect([target, reply.status, reply.body]).toEqual([target, 404, NOT_FOUND]);
    }
    const listed = await raw(server.url, 'GET', '//x/admin/clients', admin());
    expect([listed.status, listed.body]).toEqual([404, NOT_FOUND]);
  });

  it('answers 404 for a trailing slash or dot segments: a path mismatch like any other', async () => {
    for (const target of ['/proxyV2/', '/admin/clients/', '/healthz/', '/x/../healthz', '/./healthz']) {
      const reply = await raw(server.url, 'GET', target, admin());
      expect([target, reply.status, reply.body]).toEqual([target, 404, NOT_FOUND]);
    }
    const post = await raw(server.url, 'POST', '/proxyV2/', admin(), '{}');
    expect([post.status, post.body]).toEqual([404, NOT_FOUND]);
  });

  it('accepts the absolute form of a request target by its path', async () => {
    const reply = await raw(server.url, 'GET', `${server.url}/healthz`);
    expect([reply.status, reply.body]).toEqual([200, { ok: true }]);
    const doubled = await raw(server.url, 'GET', `${server.url}//healthz`);
    expect([doubled.status, doubled.body]).toEqual([404, NOT_FOUND]);
  });

  it('answers 400 invalid_request for a target that is no path', async () => {
    const reply = await raw(server.url, 'OPTIONS', '*');
    expect([reply.status, reply.body]).toEqual([
      400,
      {
        ok: false,
        error: 'invalid_request',
        message: 'The request target is malformed.',
        issues: [{ path: '', message: 'Malformed URL.' }],
      },
    ]);
  });

  it('answers 400 for a path parameter that is not valid percent-encoding', async () => {
    const reply = await raw(server.url, 'GET', '/admin/clients/%E0%A4%A/redirect-uris', admin());
    expect([reply.status, reply.body]).toEqual([
      400,
      {
        ok: false,
        error: 'invalid_request',
        message: 'The path is not valid percent-encoding.',
        issues: [{ path: '', message: 'Malformed path.' }],
      },
    ]);
  });

  it('dispatches every operation of /openapi.json, and only those, from one table', async () => {
    const document = (await call(server.url, 'GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => METHODS.includes(method.toUpperCase()))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    const table = createRouteTable(createRoutes(server.app.deps, createMetrics()));
    const dispatched = table
      .operations()
      .filter((operation) => operation.documented)
      .map((operation) => `${operation.method} ${operation.path}`);
    expect([...dispatched].sort()).toEqual([...documented].sort());

    for (const [path, item] of Object.entries(document.paths)) {
      const concrete = path.replace(/\{[^}]+\}/g, 'x');
      const allowed = Object.keys(item).map((m) => m.toUpperCase());
      for (const method of METHODS) {
        const reply = await raw(server.url, method, concrete, {}, method === 'GET' ? undefined : '');
        if (allowed.includes(method)) {
          // Reached its handler: whatever it answers, it is not the table's 404 or 405.
          expect([method, path, reply.body]).not.toEqual([method, path, NOT_FOUND]);
          expect([method, path, reply.status]).not.toEqual([method, path, 405]);
        } else {
          expect([method, path, reply.status, reply.headers.allow]).toEqual([
            method,
            path,
            405,
            allowed.join(', '),
          ]);
        }
      }
    }
  });
});

describe('parseTarget', () => {
  it('keeps the path as sent and reads the query', () => {
    const parsed = parseTarget('//evil.example/proxyV2?a=1&a=2');
    expect(parsed?.path).toBe('//evil.example/proxyV2');
    expect(parsed?.url.searchParams.getAll('a')).toEqual(['1', '2']);
    expect(parseTarget('/a/../b')?.path).toBe('/a/../b');
    expect(parseTarget('http://h:1/x?y=1')?.path).toBe('/x');
    expect(parseTarget('http://h:1?y=1')?.path).toBe('/');
    expect(parseTarget('*')).toBeNull();
  });

  it('says whether there is a query, and parses a bare path as a URL only when asked', () => {
    const bare = parseTarget('/proxyV2');
    expect([bare?.path, bare?.hasQuery]).toEqual(['/proxyV2', false]);
    expect([bare?.url.pathname, bare?.url.search]).toEqual(['/proxyV2', '']);
    const queried = parseTarget('/tools?q=a%20b&limit=2');
    expect([queried?.path, queried?.hasQuery]).toEqual(['/tools', true]);
    expect(Object.fromEntries(queried?.url.searchParams ?? [])).toEqual({ q: 'a b', limit: '2' });
    expect(parseTarget('http://h:1/x#frag')?.hasQuery).toBe(true);
  });
});
