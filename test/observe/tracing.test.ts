/**
 * Traces (docs/reference.md "Traces"): with OTEL_EXPORTER_OTLP_ENDPOINT set, a real OTLP/HTTP
 * receiver on loopback (a small HTTP server decoding the exporter's OTLP JSON) gets a span per
 * request, per tool call (its child), per upstream request and per OAuth token refresh (the tool
 * call's children) and per database statement, with the semantic conventions' attributes and no
 * secret anywhere; unset, no tracing at all.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../server/config.ts';
import { HEADER } from '../../shared/headers.ts';
import { type Harness, redirectQuery, startHarness } from '../oauth/harness.ts';
import {
  type Agent,
  agentHeaders,
  provisionAgent,
  proxy,
  registerApp,
  userHeader,
} from '../support/agent.ts';
import { call, startServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  kind: number;
  attributes: Record<string, string | number | boolean | undefined>;
  status?: { code?: number };
}
/** OTLP's SpanKind numbers (not the API's). */
const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 };

/** An OTLP/HTTP receiver: keeps every span of every export, and the raw bodies for secret scans. */
async function startReceiver() {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      bodies.push(body);
      if (req.url === '/v1/traces' && String(req.headers['content-type']).includes('json')) {
        const payload = JSON.parse(body) as {
          resourceSpans: {
            scopeSpans: { spans: (ReceivedSpan & { attributes: { key: string; value: OtlpValue }[] })[] }[];
          }[];
        };
        for (const resource of payload.resourceSpans)
          for (const scope of resource.scopeSpans)
            for (const span of scope.spans)
              spans.push({
                ...span,
                attributes: Object.fromEntries(
                  span.attributes.map(({ key, value }) => [
                    key,
                    value.stringValue ??
                      (value.intValue !== undefined ? Number(value.intValue) : value.boolValue),
                  ]),
                ),
              });
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('traces over OTLP/HTTP', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let server: TestServer;
  let upstream: Upstream;
  let agent: Agent;

  const spanNamed = (name: string, requestId?: string) => {
    const found = receiver.spans.filter(
      (s) =>
        s.name === name && (requestId === undefined || s.attributes['toolgate.request_id'] === requestId),
    );
    expect(
      found.map((s) => s.name),
      `spans named ${name}`,
    ).toEqual([name]);
    return found[0] as ReceivedSpan;
  };
  const exported = async (name: string) => {
    await server.app.deps.tracing?.flush();
    await expect.poll(() => receiver.spans.some((s) => s.name === name), { timeout: 30_000 }).toBe(true);
  };

  beforeAll(async () => {
    [receiver, upstream] = await Promise.all([startReceiver(), startUpstream()]);
    server = await startServer('pglite', { env: { OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/` } });
    await registerApp(server, 'traced', {
      provider: 'acme.traced',
      openapi: upstream.openapi,
      auth: { type: 'api_key', in: 'query', name: 'api_key', value: upstream.apiKey },
    });
    agent = await provisionAgent(server, ['tools:execute']);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all([receiver?.close(), upstream?.close()]);
  });

  it('links the request, the tool call and the upstream request, with their attributes', async () => {
    const reply = await proxy(
      server,
      agent,
      { toolId: 'traced:::getWithQueryKey', parameters: {} },
      { [HEADER.requestId]: 'trace-rest' },
    );
    expect(reply.status).toBe(200);
    await exported('GET /secure/query-key');

    const request = spanNamed('POST /proxyV2', 'trace-rest');
    expect(request.kind).toBe(KIND.SERVER);
    expect(request.parentSpanId ?? '').toBe('');
    expect(request.attributes).toEqual({
      'http.request.method': 'POST',
      'http.route': '/proxyV2',
      'url.path': '/proxyV2',
      'url.scheme': 'http',
      'toolgate.request_id': 'trace-rest',
      'http.response.status_code': 200,
    });
    const tool = spanNamed('execute_tool traced:::getWithQueryKey');
    expect(tool).toMatchObject({
      kind: KIND.INTERNAL,
      traceId: request.traceId,
      parentSpanId: request.spanId,
    });
    expect(tool.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'traced:::getWithQueryKey',
      'gen_ai.tool.type': 'function',
      'toolgate.surface': 'rest',
      'toolgate.client_id': agent.clientId,
      'toolgate.outcome': 'ok',
    });
    const outbound = spanNamed('GET /secure/query-key');
    expect(outbound).toMatchObject({
      kind: KIND.CLIENT,
      traceId: request.traceId,
      parentSpanId: tool.spanId,
    });
    expect(outbound.attributes).toEqual({
      'http.request.method': 'GET',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(upstream.url).port),
      'url.scheme': 'http',
      'url.template': '/secure/query-key',
      'http.response.status_code': 200,
    });
  });

  it('traces an MCP tool call and a failed call as errors', async () => {
    const mcp = await fetch(new URL('/mcp', server.url), {
      method: 'POST',
      headers: {
        ...agentHeaders(agent),
        [HEADER.requestId]: 'trace-mcp',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'traced__getStatus',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'traced__getStatus',
          arguments: { code: 503 },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    expect(mcp.status).toBe(200);
    await exported('GET /status/{code}');
    const request = spanNamed('POST /mcp', 'trace-mcp');
    const tool = spanNamed('execute_tool traced:::getStatus');
    expect(tool).toMatchObject({ parentSpanId: request.spanId, status: { code: 2 } });
    expect(tool.attributes).toMatchObject({
      'toolgate.surface': 'mcp',
      'mcp.method.name': 'tools/call',
      'toolgate.outcome': 'upstream_error',
      'error.type': 'upstream_error',
    });
    expect(spanNamed('GET /status/{code}')).toMatchObject({
      parentSpanId: tool.spanId,
      attributes: { 'http.response.status_code': 503, 'error.type': 'upstream_error' },
    });
  });

  it('makes each database statement a child span of the request that sent it', async () => {
    const created = await call(server.url, 'POST', '/admin/clients', {
      key: server.adminKey,
      body: { name: 'traced client' },
      headers: { [HEADER.requestId]: 'trace-admin' },
    });
    expect(created.status).toBe(200);
    await exported('POST /admin/clients');
    const request = spanNamed('POST /admin/clients', 'trace-admin');
    const statements = receiver.spans.filter((s) => s.traceId === request.traceId && s.kind === KIND.CLIENT);
    expect(statements.map((s) => s.name)).toContain('INSERT');
    const insert = statements.find((s) => s.attributes['db.query.text']?.toString().includes('"clients"'));
    expect(insert).toMatchObject({
      parentSpanId: request.spanId,
      attributes: { 'db.system.name': 'postgresql', 'db.operation.name': 'INSERT' },
    });
    // Values are bind parameters: the statement's text never holds one.
    expect(String(insert?.attributes['db.query.text'])).not.toContain('traced client');
  });

  it('puts no secret in any span', () => {
    const everything = receiver.bodies.join('\n');
    expect(everything.length).toBeGreaterThan(0);
    for (const secret of [upstream.apiKey, agent.apiKey, server.adminKey])
      expect(everything).not.toContain(secret);
  });

  it('is off, with no tracer at all, when OTEL_EXPORTER_OTLP_ENDPOINT is unset', async () => {
    const plain = await startServer('pglite');
    try {
      expect(plain.app.deps.tracing).toBeUndefined();
    } finally {
      await plain.close();
    }
  });
});

describe('traces of an OAuth token refresh', () => {
  /** The provider's access tokens live 300 s; this leaves them 60 s: inside the refresh window. */
  const INTO_REFRESH_WINDOW = 300_000 - LIMITS.refreshSkewMs;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let h: Harness;

  beforeAll(async () => {
    receiver = await startReceiver();
    h = await startHarness('pglite', { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
  }, 120_000);

  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  /** Calls getMe for `userId` under request id `requestId`; answers the reply's status. */
  const callAs = async (userId: string, requestId: string) =>
    (
      await proxy(
        h.server,
        h.agent,
        { toolId: 'demo:::getMe', parameters: {} },
        { ...userHeader(userId), [HEADER.requestId]: requestId },
      )
    ).status;

  /**
   * The spans of the call sent under `requestId`: its request span, and the spans of that trace
   * by name. Waits until the trace's refresh span has been exported.
   */
  const traceOf = async (requestId: string) => {
    await h.server.app.deps.tracing?.flush();
    const request = () =>
      receiver.spans.find(
        (s) => s.name === 'POST /proxyV2' && s.attributes['toolgate.request_id'] === requestId,
      );
    const named = (name: string) =>
      receiver.spans.filter((s) => s.traceId === request()?.traceId && s.name === name);
    await expect.poll(() => named('refresh_token demo').length, { timeout: 30_000 }).toBe(1);
    return { request: request() as ReceivedSpan, named };
  };

  const tokenEndpoint = () => {
    const url = new URL(h.provider.tokenUrl);
    return { 'server.address': url.hostname, 'server.port': Number(url.port), 'url.scheme': 'http' };
  };

  it('makes the refresh of an expiring token a child of the tool call, before the upstream request', async () => {
    expect(redirectQuery(await h.connect('t1')).get('status')).toBe('success');
    h.clock.advance(INTO_REFRESH_WINDOW);
    expect(await callAs('t1', 'trace-refresh')).toBe(200);

    const { request, named } = await traceOf('trace-refresh');
    const [tool] = named('execute_tool demo:::getMe');
    expect(tool).toMatchObject({ parentSpanId: request.spanId, attributes: { 'toolgate.outcome': 'ok' } });
    const [refresh, ...more] = named('refresh_token demo');
    expect(more).toEqual([]);
    expect(refresh).toMatchObject({ kind: KIND.INTERNAL, parentSpanId: tool?.spanId });
    expect(refresh?.status?.code ?? 0).toBe(0);
    expect(refresh?.attributes).toEqual({
      'toolgate.app_id': 'demo',
      'toolgate.client_id': h.agent.clientId,
      'toolgate.refresh.reason': 'expiring',
      ...tokenEndpoint(),
      'toolgate.outcome': 'ok',
    });
    const upstream = named('GET /me');
    expect(upstream.map((s) => s.parentSpanId)).toEqual([tool?.spanId]);
    // The upstream request waits for the refresh's token. To the millisecond: the SDK stamps a
    // span's start with Date.now() (whole milliseconds) and its end from performance.now() after
    // it, so a span that starts after another has ended can still show a start up to 1 ms earlier
    // (seen in CI: an end at …370.426 ms, the next start at …370.000 ms).
    expect(BigInt(refresh?.endTimeUnixNano ?? 0)).toBeLessThanOrEqual(
      BigInt(upstream[0]?.startTimeUnixNano ?? 0) + 1_000_000n,
    );
    // The refresh's own database work (the grant's row lock, the save) is nested under it.
    const statements = receiver.spans.filter((s) => s.parentSpanId === refresh?.spanId);
    expect(statements.length).toBeGreaterThan(0);
    expect(
      statements.every((s) => s.kind === KIND.CLIENT && s.attributes['db.system.name'] === 'postgresql'),
    ).toBe(true);
  });

  it('names a refresh after an upstream 401 "rejected", between the two upstream requests', async () => {
    expect(redirectQuery(await h.connect('t2')).get('status')).toBe('success');
    await h.provider.revokeAccessTokens('t2');
    expect(await callAs('t2', 'trace-rejected')).toBe(200);

    const { named } = await traceOf('trace-rejected');
    const [tool] = named('execute_tool demo:::getMe');
    const [refresh] = named('refresh_token demo');
    expect(refresh).toMatchObject({
      parentSpanId: tool?.spanId,
      attributes: { 'toolgate.refresh.reason': 'rejected', 'toolgate.outcome': 'ok' },
    });
    const upstream = named('GET /me').sort((a, b) =>
      Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)),
    );
    expect(upstream.map((s) => [s.parentSpanId, s.attributes['http.response.status_code']])).toEqual([
      [tool?.spanId, 401],
      [tool?.spanId, 200],
    ]);
  });

  it('marks a failed refresh as an error with the token endpoint status', async () => {
    expect(redirectQuery(await h.connect('t3')).get('status')).toBe('success');
    h.clock.advance(INTO_REFRESH_WINDOW);
    h.provider.failTokenEndpoint(1, 503);
    expect(await callAs('t3', 'trace-refresh-failed')).toBe(502);

    const { named } = await traceOf('trace-refresh-failed');
    const [tool] = named('execute_tool demo:::getMe');
    expect(tool).toMatchObject({ status: { code: 2 }, attributes: { 'toolgate.outcome': 'upstream_error' } });
    const [refresh] = named('refresh_token demo');
    expect(refresh).toMatchObject({ parentSpanId: tool?.spanId, status: { code: 2 } });
    expect(refresh?.attributes).toEqual({
      'toolgate.app_id': 'demo',
      'toolgate.client_id': h.agent.clientId,
      'toolgate.refresh.reason': 'expiring',
      ...tokenEndpoint(),
      'toolgate.outcome': 'upstream_error',
      'http.response.status_code': 503,
      'error.type': 'upstream_error',
    });
    expect(named('GET /me')).toEqual([]);
  });

  it('puts no token, code, verifier or secret of the OAuth flow in any span', () => {
    const everything = receiver.bodies.join('\n');
    expect(everything).toContain('refresh_token demo');
    const secrets = [...h.provider.secrets(), h.provider.clientSecret, h.agent.apiKey, h.server.adminKey];
    expect(secrets.length).toBeGreaterThan(6);
    for (const secret of secrets) expect(everything).not.toContain(secret);
    // User ids stay out of spans too.
    expect(everything).not.toMatch(/"t[123]"/);
  });
});
