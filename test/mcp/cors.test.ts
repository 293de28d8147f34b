/**
 * CORS on /mcp (docs/reference.md "MCP"): an Origin the DNS-rebinding guard admits (PUBLIC_URL's,
 * MCP_ALLOWED_ORIGINS, loopback pages on a loopback server) gets its preflight answered and every
 * answer readable; any other Origin gets 403 and no CORS header at all; a request without Origin
 * is answered as before. Raw HTTP, every header that matters asserted whole; the browser itself is
 * in cors-browser.test.ts.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, agentHeaders, provisionAgent } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';

const ADMITTED = 'http://localhost:6274';
const LISTED = 'https://console.example';
const FOREIGN = 'https://evil.example';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'cors-test', version: '1' },
  },
});

const REFUSED_ORIGIN = {
  jsonrpc: '2.0',
  error: { code: -32000, message: 'This Origin may not call /mcp (MCP_ALLOWED_ORIGINS).' },
  id: null,
};

/** Headers every answer has whatever it is (and no CORS fact): left out of the comparisons. */
const PLUMBING = new Set([
  'date',
  'connection',
  'keep-alive',
  'x-request-id',
  'content-length',
  'content-type',
  'transfer-encoding',
]);

/** What the SDK's answer on an event stream (2025-era initialize) carries besides. */
const EVENT_STREAM = { 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' };

function headerSet(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => !PLUMBING.has(name)));
}

async function send(
  server: TestServer,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Record<string, string>; body: unknown }> {
  const response = await fetch(new URL('/mcp', server.url), {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await response.text();
  const json = response.headers.get('content-type')?.startsWith('application/json');
  return {
    status: response.status,
    headers: headerSet(response.headers),
    body: json ? JSON.parse(text) : text,
  };
}

/** What a page's fetch with the agent headers asks before its POST. */
const preflight = (origin: string, requestHeaders: string) => ({
  origin,
  'access-control-request-method': 'POST',
  'access-control-request-headers': requestHeaders,
});

const ALLOW_HEADERS =
  'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, mcp-method, mcp-name, ' +
  'last-event-id, x-service-client-id, x-service-user-id, x-request-id';

/** On every answer to an admitted origin. */
const READABLE = (origin: string) => ({
  'access-control-allow-origin': origin,
  'access-control-expose-headers':
    'www-authenticate, mcp-session-id, mcp-protocol-version, retry-after, x-request-id',
  vary: 'Origin',
});

describe('CORS on /mcp', () => {
  let server: TestServer;
  let agent: Agent;

  beforeAll(async () => {
    server = await startServer('pglite', { env: { MCP_ALLOWED_ORIGINS: LISTED } });
    agent = await provisionAgent(server, ['tools:execute']);
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([ADMITTED, LISTED])(
    'answers the preflight of an admitted origin (%s) with 204 and what it may send',
    async (origin) => {
      const reply = await send(
        server,
        'OPTIONS',
        preflight(origin, 'authorization,content-type,mcp-protocol-version,x-service-client-id'),
      );
      expect(reply).toEqual({
        status: 204,
        headers: {
          'access-control-allow-origin': origin,
          'access-control-allow-methods': 'POST, GET, DELETE',
          'access-control-allow-headers': ALLOW_HEADERS,
          'access-control-max-age': '7200',
          vary: 'Origin, Access-Control-Request-Headers',
        },
        body: '',
      });
    },
  );

  it("allows the Mcp-Param-<Name> headers a tool's arguments are mirrored into (SEP-2243), nothing else asked", async () => {
    const reply = await send(
      server,
      'OPTIONS',
      preflight(ADMITTED, 'authorization, Mcp-Param-Region, x-forwarded-for, mcp-param-bad name'),
    );
    expect(reply.status).toBe(204);
    expect(reply.headers['access-control-allow-headers']).toBe(`${ALLOW_HEADERS}, mcp-param-region`);
  });

  it('refuses the preflight of any other origin with the 403 of its other requests, no CORS header', async () => {
    for (const origin of [FOREIGN, 'null', 'https://localhost:6274']) {
      const reply = await send(server, 'OPTIONS', preflight(origin, 'authorization'));
      expect({ origin, ...reply }).toEqual({ origin, status: 403, headers: {}, body: REFUSED_ORIGIN });
    }
  });

  it('makes every answer to an admitted origin readable: 200, 401 with WWW-Authenticate, 405, 400', async () => {
    const ok = await send(
      server,
      'POST',
      { ...agentHeaders(agent), accept: 'application/json, text/event-stream', origin: ADMITTED },
      INITIALIZE,
    );
    expect([ok.status, ok.headers]).toEqual([200, { ...READABLE(ADMITTED), ...EVENT_STREAM }]);

    const unauthorized = await send(
      server,
      'POST',
      { accept: 'application/json, text/event-stream', origin: LISTED },
      INITIALIZE,
    );
    expect([unauthorized.status, unauthorized.headers]).toEqual([
      401,
      { ...READABLE(LISTED), 'www-authenticate': 'Bearer' },
    ]);

    for (const method of ['GET', 'DELETE']) {
      const refused = await send(server, method, { ...agentHeaders(agent), origin: ADMITTED });
      expect({ method, ...refused }).toEqual({
        method,
        status: 405,
        headers: { ...READABLE(ADMITTED), allow: 'POST' },
        body: { ok: false, error: 'method_not_allowed', message: `${method} is not allowed on this path.` },
      });
    }

    const batch = await send(server, 'POST', { ...agentHeaders(agent), origin: ADMITTED }, '[]');
    expect([batch.status, batch.headers]).toEqual([400, READABLE(ADMITTED)]);
  });

  it('lets an admitted origin read the 403 of a Host this server does not answer for', async () => {
    // fetch cannot set Host: a raw request does.
    const reply = await new Promise<{ status: number; headers: Record<string, string>; body: unknown }>(
      (resolve, reject) => {
        const req = request(
          new URL('/mcp', server.url),
          {
            method: 'POST',
            headers: { host: 'rebound.example', 'content-type': 'application/json', origin: ADMITTED },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => {
              const headers = headerSet(new Headers(res.headers as Record<string, string>));
              resolve({
                status: res.statusCode ?? 0,
                headers,
                body: JSON.parse(Buffer.concat(chunks).toString()),
              });
            });
          },
        );
        req.on('error', reject);
        req.end(INITIALIZE);
      },
    );
    expect(reply).toEqual({
      status: 403,
      headers: READABLE(ADMITTED),
      body: {
        jsonrpc: '2.0',
        error: { code: -32000, message: 'The Host header names no host this server answers for.' },
        id: null,
      },
    });
  });

  it('answers a foreign origin 403 without CORS, and a request without Origin as before', async () => {
    const foreign = await send(server, 'POST', { ...agentHeaders(agent), origin: FOREIGN }, INITIALIZE);
    expect(foreign).toEqual({ status: 403, headers: {}, body: REFUSED_ORIGIN });

    const plain = await send(
      server,
      'POST',
      { ...agentHeaders(agent), accept: 'application/json, text/event-stream' },
      INITIALIZE,
    );
    expect([plain.status, plain.headers]).toEqual([200, EVENT_STREAM]);
    // An OPTIONS that is no preflight (no Origin) is the 405 it always was.
    const options = await send(server, 'OPTIONS', {});
    expect([options.status, options.headers]).toEqual([405, { allow: 'POST' }]);
  });
});
