/**
 * A fuzz run over every route (contract §1: "Never a 500 for bad input"): 1,200 malformed or random
 * requests — every documented path and method of /openapi.json, every tRPC procedure, and paths
 * and methods the server does not have — with random path segments, queries, headers (good and
 * bad keys, client ids, user ids, content types) and bodies (broken JSON, wrong types, deep
 * nesting, control characters, huge numbers, mutated valid bodies). Seeded, so a failure repeats.
 *
 * Every request must be answered (no hang: each has its own time limit), none with a 5xx other
 * than the upstream rows of the contract (502/504 from a real upstream a fuzzed call reached), and
 * the server must log no error and still answer /healthz afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRouter } from '../../server/routers/_app.ts';
import { AGENT_SCOPES, type Agent, agentHeaders, provisionAgent, registerApp } from '../support/agent.ts';
import { call, startServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

const REQUESTS = 1_200;
const SEED = 23;
const UPSTREAM_CODES = new Set([
  'upstream_error',
  'upstream_unreachable',
  'upstream_timeout',
  'upstream_too_large',
]);

/** mulberry32: a small seeded generator, so a failing case can be run again. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  return { next, int, pick };
}

type Random = ReturnType<typeof generator>;

const NASTY_STRINGS = [
  '',
  ' ',
  'a',
  'x'.repeat(300),
  'x'.repeat(5_000),
  '../../etc/passwd',
  '%',
  '%00',
  '%2e%2e%2f',
  'ünïcødé',
  '😀',
  '\u0000',
  'a\u0001b',
  '\u007f',
  'null',
  'true',
  '-1',
  '1e309',
  '9007199254740993',
  '<script>',
  "' OR 1=1 --",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log-injection probe, meant literally.
  '${jndi:x}',
  'demo:::',
  ':::',
  'plain:::echo',
  'plain:::nope',
  '__proto__',
  'constructor',
];

function randomString(r: Random): string {
  if (r.next() < 0.6) return r.pick(NASTY_STRINGS);
  const length = r.int(40);
  let out = '';
  for (let i = 0; i < length; i += 1)
    out += String.fromCharCode(r.next() < 0.9 ? 32 + r.int(95) : r.int(0x3000));
  return out;
}

function randomValue(r: Random, depth = 0): unknown {
  const kind = r.int(depth > 3 ? 6 : 9);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return r.next() < 0.5;
    case 2:
      return r.pick([0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER]);
    case 3:
    case 4:
    case 5:
      return randomString(r);
    case 6:
      return Array.from({ length: r.int(4) }, () => randomValue(r, depth + 1));
    default: {
      const keys = [
        'toolId',
        'parameters',
        'appId',
        'name',
        'scopes',
        'uri',
        'provider',
        'openapi',
        'auth',
        'clientRedirectUri',
        'userId',
        randomString(r),
      ];
      const out: Record<string, unknown> = {};
      for (let i = r.int(5); i > 0; i -= 1) out[r.pick(keys)] = randomValue(r, depth + 1);
      return out;
    }
  }
}

/** A body: broken JSON, random JSON, a mutated plausible body, deep nesting, or none. */
function randomBody(r: Random): string | undefined {
  switch (r.int(8)) {
    case 0:
      return undefined;
    case 1:
      return r.pick([
        '{',
        '}',
        '[',
        '{"a":',
        'nul',
        '{"toolId": "x",}',
        '\u0000',
        '"unterminated',
        '{}{}',
        '',
      ]);
    case 2:
      return `${'['.repeat(200 + r.int(3_000))}${']'.repeat(r.int(2) === 0 ? 0 : 200)}`;
    case 3:
      return JSON.stringify({
        toolId: r.pick(['plain:::echo', 'plain:::nope', randomString(r)]),
        parameters: randomValue(r),
      });
    case 4:
      return JSON.stringify({ provider: randomString(r), openapi: randomValue(r), auth: randomValue(r) });
    case 5:
      return JSON.stringify({
        appId: randomString(r),
        userId: randomString(r),
        clientRedirectUri: randomString(r),
      });
    default:
      return JSON.stringify(randomValue(r));
  }
}

/** Fills each `{placeholder}` of a path template: a real id now and then, mostly junk. */
function fillPath(r: Random, template: string, real: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) =>
    r.next() < 0.3 && real[name] ? (real[name] as string) : encodeURIComponent(randomString(r)) || 'x',
  );
}

interface Target {
  method: string;
  path: string;
}

describe('fuzz run over every route', () => {
  let server: TestServer;
  let upstream: Upstream;
  let agent: Agent;
  let targets: Target[];

  beforeAll(async () => {
    [server, upstream] = await Promise.all([
      startServer('pglite', { env: { RATE_LIMIT_PER_KEY_PER_MIN: '0', UPSTREAM_TIMEOUT_MS: '3000' } }),
      startUpstream(),
    ]);
    await registerApp(server, 'plain', {
      provider: 'acme.plain',
      openapi: upstream.openapi,
      auth: { type: 'none' },
    });
    agent = await provisionAgent(server, AGENT_SCOPES);
    const document = (await call(server.url, 'GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    targets = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const method of Object.keys(operations)) targets.push({ method: method.toUpperCase(), path });
    }
    for (const procedure of Object.keys(appRouter._def.procedures)) {
      targets.push(
        { method: 'GET', path: `/trpc/${procedure}` },
        { method: 'POST', path: `/trpc/${procedure}` },
      );
    }
    targets.push(
      { method: 'POST', path: '/mcp' },
      { method: 'GET', path: '/nowhere/{x}' },
      { method: 'PATCH', path: '/proxyV2' },
      { method: 'OPTIONS', path: '/tools' },
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all([server?.close(), upstream?.close()]);
  });

  it(`answers ${REQUESTS} malformed and random requests without a 5xx or a hang`, async () => {
    const r = generator(SEED);
    const real = { appId: 'plain', clientId: agent.clientId, keyId: agent.keyId, procedure: 'tools.list' };
    const requests = Array.from({ length: REQUESTS }, (_, index) => {
      const target = r.pick(targets);
      const method =
        r.next() < 0.85
          ? target.method
          : r.pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']);
      let path = fillPath(r, target.path, real);
      if (r.next() < 0.3)
        path += `?${encodeURIComponent(randomString(r))}=${encodeURIComponent(randomString(r))}`;
      if (r.next() < 0.1) path += `&batch=1&input=${encodeURIComponent(randomBody(r) ?? '')}`;
      const headers: Record<string, string> = {};
      const who = r.int(4);
      if (who === 0) Object.assign(headers, agentHeaders(agent, r.next() < 0.7 ? 'u1' : undefined));
      if (who === 1) headers.authorization = `Bearer ${server.adminKey}`;
      if (who === 2)
        headers.authorization = r.pick(['Bearer', 'Basic abc', `Bearer ${agent.apiKey}x`, 'Bearer tg_x_y']);
      if (r.next() < 0.3) headers['x-service-client-id'] = encodeURIComponent(randomString(r));
      if (r.next() < 0.3) headers['x-service-user-id'] = encodeURIComponent(randomString(r));
      if (r.next() < 0.2) headers['x-service-idempotency-key'] = encodeURIComponent(randomString(r)) || 'k';
      if (r.next() < 0.1) headers.origin = r.pick(['http://localhost:1', 'https://evil.example', 'null']);
      const body = method === 'GET' || method === 'HEAD' ? undefined : randomBody(r);
      if (body !== undefined)
        headers['content-type'] = r.pick([
          'application/json',
          'application/json',
          'application/json; charset=utf-8',
          'text/plain',
          'application/x-www-form-urlencoded',
          'application/json; charset=bogus',
        ]);
      if (path.startsWith('/mcp')) headers.accept = 'application/json, text/event-stream';
      return { index, method, path, headers, body };
    });

    const outcomes: Array<{
      index: number;
      method: string;
      path: string;
      status: number | string;
      error?: string;
    }> = [];
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const request = requests[next++] as (typeof requests)[number];
        try {
          const response = await fetch(new URL(request.path, server.url), {
            method: request.method,
            headers: request.headers,
            body: request.body,
            redirect: 'manual',
            signal: AbortSignal.timeout(20_000),
          });
          const text = await response.text();
          let error: string | undefined;
          try {
            error = (JSON.parse(text) as { error?: string }).error;
          } catch {}
          outcomes.push({
            index: request.index,
            method: request.method,
            path: request.path,
            status: response.status,
            error,
          });
        } catch (failure) {
          outcomes.push({
            index: request.index,
            method: request.method,
            path: request.path,
            status:
              (failure as Error).name === 'TimeoutError' ? 'hang' : `failed: ${(failure as Error).message}`,
          });
        }
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));

    expect(outcomes).toHaveLength(REQUESTS);
    const bad = outcomes.filter(
      (o) => typeof o.status !== 'number' || (o.status >= 500 && !UPSTREAM_CODES.has(o.error ?? '')),
    );
    expect(bad).toEqual([]);
    const errorLines = server.logs
      .flatMap((chunk) => chunk.split('\n').filter(Boolean))
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((line) => line.level >= 50);
    expect(errorLines).toEqual([]);
    expect((await call(server.url, 'GET', '/healthz')).status).toBe(200);
    // The run reached the routes, not only their doors: some calls were answered 2xx.
    expect(outcomes.filter((o) => typeof o.status === 'number' && o.status < 300).length).toBeGreaterThan(20);
  }, 600_000);
});
