/**
 * A plain 2026-07-28 `tools/call` is answered without the SDK's per-request machinery
 * (server/mcp/direct-call.ts). Which requests take that path, and that its answers are the SDK's
 * own, byte for byte: each request goes to the real /mcp and to the same route built with every
 * request sent to the SDK, on one server (one database, one rate limiter).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MatchedRequest, parseTarget, type RequestTarget } from '../../server/http/route-table.ts';
import { DirectCallRecognizer } from '../../server/mcp/direct-call.ts';
import { createMcpRoute } from '../../server/mcp/http.ts';
import { agentHeaders, provisionAgent, registerApp } from '../support/agent.ts';
import { type EchoUpstream, startEchoUpstream } from '../support/echo-upstream.ts';
import { freePort } from '../support/ports.ts';
import { startServer, type TestServer } from '../support/server.ts';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const HEADERS = {
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'demo__getItem',
};
const call = (params: Record<string, unknown>, id: string | number = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'demo__getItem', arguments: { id: 7 }, _meta: META, ...params },
});

describe('which calls take the direct path', () => {
  // One recognizer for every case: a verdict remembered for an envelope must not leak to another.
  const recognizer = new DirectCallRecognizer();
  const directCallOf = (message: unknown, headers: Record<string, string>) =>
    recognizer.recognize(message, headers);

  it('takes a plain call with its three standard headers', () => {
    expect(directCallOf(call({}), HEADERS)).toEqual({ id: 1, name: 'demo__getItem', arguments: { id: 7 } });
    expect(directCallOf(call({ arguments: undefined }, 'a'), HEADERS)).toEqual({
      id: 'a',
      name: 'demo__getItem',
      arguments: {},
    });
    expect(directCallOf(call({}), { ...HEADERS, 'mcp-name': ' demo__getItem\t' })).toBeDefined();
    // Remembered: the same envelope again, with another id.
    expect(directCallOf(call({}, 7), HEADERS)).toEqual({
      id: 7,
      name: 'demo__getItem',
      arguments: { id: 7 },
    });
  });

  it('leaves everything else to the SDK', () => {
    const { 'mcp-name': _name, ...withoutName } = HEADERS;
    const cases: Array<[unknown, Record<string, string>]> = [
      [call({}), withoutName],
      [call({}), { ...HEADERS, 'mcp-name': 'demo__other' }],
      [call({}), { ...HEADERS, 'mcp-name': '=?base64?ZGVtb19fZ2V0SXRlbQ==?=' }],
      [call({}), { ...HEADERS, 'mcp-protocol-version': '2025-11-25' }],
      [call({}), { ...HEADERS, 'mcp-method': 'tools/list' }],
      [call({ requestState: 'x' }), HEADERS],
      [call({ inputResponses: {} }), HEADERS],
      [call({ task: {} }), HEADERS],
      [call({ _meta: { ...META, progressToken: 1 } }), HEADERS],
      [call({ _meta: { ...META, 'io.modelcontextprotocol/clientInfo': 'x' } }), HEADERS],
      [call({ _meta: undefined }), HEADERS],
      [call({ arguments: [1] }), HEADERS],
      [call({ arguments: JSON.parse('{"__proto__":{"x":1}}') }), HEADERS],
      [{ ...call({}), extra: true }, HEADERS],
      [{ ...call({}), id: null }, HEADERS],
      [{ ...call({}), id: 1.5 }, HEADERS],
      [{ ...call({}), jsonrpc: '1.0' }, HEADERS],
      [call({}), { ...HEADERS, 'mcp-protocol-version': '2026-07-28\u00a0' }],
      [call({ _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } }), HEADERS],
      [
        { ...call({}), method: 'tools/list' },
        { ...HEADERS, 'mcp-method': 'tools/list' },
      ],
    ];
    // Twice each: the second time, a remembered verdict answers where one exists.
    for (const [message, headers] of [...cases, ...cases])
      expect(directCallOf(message, headers)).toBeUndefined();
  });
});

describe('answers of the direct path and of the SDK', { timeout: 60_000 }, () => {
  let server: TestServer;
  let upstream: EchoUpstream;
  let sdkOnly: Server;
  let sdkUrl: string;
  let agent: Record<string, string>;

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    server = await startServer('pglite', { env: { RATE_LIMIT_PER_KEY_PER_MIN: '12' } });
    const getItem = {
      operationId: 'getItem',
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
      responses: { '200': { description: 'ok' } },
    };
    const openapi = {
      openapi: '3.1.0',
      info: { title: 'demo', version: '1' },
      paths: { '/items/{id}': { get: getItem } },
    };
    await registerApp(server, 'demo', {
      provider: 'example.demo',
      baseUrl: upstream.url,
      openapi,
      auth: { type: 'none' },
    });
    // The same tool behind a port nothing listens on: an error result of the upstream.
    const dead = `http://127.0.0.1:${await freePort()}`;
    await registerApp(server, 'dead', {
      provider: 'example.dead',
      baseUrl: dead,
      openapi,
      auth: { type: 'none' },
    });
    agent = {
      ...agentHeaders(await provisionAgent(server, ['tools:execute'])),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };

    const handle = createMcpRoute(server.app.deps, { direct: false });
    sdkOnly = createServer((req, res) => {
      const target = parseTarget(req.url ?? '/') as RequestTarget;
      void handle(req, res, new MatchedRequest(target, {}, 'req-1', performance.now()));
    });
    await new Promise<void>((resolve) => sdkOnly.listen(0, '127.0.0.1', resolve));
    sdkUrl = `http://127.0.0.1:${(sdkOnly.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    sdkOnly?.closeAllConnections();
    await new Promise((resolve) => sdkOnly?.close(resolve));
    await server?.close();
    await upstream?.close();
  });

  /** Status, content type and body; the call's duration (and a rate limit's wait) vary between two calls. */
  async function answer(base: string, message: unknown, headers: Record<string, string>) {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...agent, ...headers },
      body: JSON.stringify(message),
    });
    const body = (await response.text())
      .replace(/(\\?"duration_ms\\?":)\d+/g, '$10')
      .replace(/(\\?"retry_after\\?":)\d+/g, '$10')
      .replace(/wait \d+ seconds/g, 'wait N seconds');
    return { status: response.status, type: response.headers.get('content-type'), body };
  }

  async function same(message: unknown, headers: Record<string, string> = HEADERS) {
    const direct = await answer(server.url, message, headers);
    const sdk = await answer(sdkUrl, message, headers);
    expect(direct).toEqual(sdk);
    return direct;
  }

  it('a success, an invalid argument, a missing one, an unknown one, an unreachable upstream', async () => {
    const ok = await same(call({}));
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({
      result: {
        content: [
          {
            type: 'text',
            text: '{"ok":true,"data":{"received":true},"meta":{"tool_id":"demo:::getItem","duration_ms":0,"provider":"example.demo"}}',
          },
        ],
        structuredContent: {
          ok: true,
          data: { received: true },
          meta: { tool_id: 'demo:::getItem', duration_ms: 0, provider: 'example.demo' },
        },
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'toolgate', version: '0.1.0' } },
      },
      jsonrpc: '2.0',
      id: 1,
    });
    expect(JSON.parse((await same(call({ arguments: { id: 'x' } }, 'two'))).body).result.isError).toBe(true);
    await same(call({ arguments: undefined }));
    await same(call({ arguments: { id: 7, colour: 'red' } }));
    const dead = { ...HEADERS, 'mcp-name': 'dead__getItem' };
    const unreachable = await same(call({ name: 'dead__getItem' }), dead);
    expect(JSON.parse(unreachable.body).result.structuredContent.error).toBe('upstream_unreachable');
  });

  it('an unknown tool and the rate limit', async () => {
    const unknown = await same(call({ name: 'demo__nope' }), { ...HEADERS, 'mcp-name': 'demo__nope' });
    expect(JSON.parse(unknown.body).error.code).toBe(-32602);
    // 12 calls a minute per key, counted across both paths (an unknown tool is not counted): the
    // calls above used 10, so one more pair is let through, and both calls of the next are refused.
    const last = await same(call({}));
    expect(JSON.parse(last.body).result.structuredContent.ok).toBe(true);
    const limited = await same(call({}));
    expect(JSON.parse(limited.body).result).toMatchObject({
      isError: true,
      structuredContent: { error: 'rate_limited', retry_after: 0 },
    });
  });
});
