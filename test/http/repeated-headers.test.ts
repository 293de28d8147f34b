// A contract header sent twice is refused (docs/reference.md "Calling conventions"): Node joins the
// copies of an `X-Service-…` header with ", ", which read as one user "u1, u2" or a third
// idempotency key, silently.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, provisionAgent } from '../support/agent.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

interface RawReply {
  status: number;
  requestId: string | undefined;
  body: unknown;
}

/** A request whose header lines are sent exactly as listed, repeated names included. */
function send(
  base: string,
  method: string,
  path: string,
  lines: string[][],
  body?: string,
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    // A header array is sent as is: Node adds no Host to it.
    const flat = ['host', url.host, ...lines.flat()];
    if (body !== undefined) flat.push('content-type', 'application/json');
    const req = request(url, { method, headers: flat }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          requestId: res.headers['x-request-id'] as string | undefined,
          body: text ? JSON.parse(text) : null,
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

const refused = (header: string) => {
  const message = `${header} was sent more than once; send it once.`;
  return { ok: false, error: 'invalid_request', message, issues: [{ path: '', message }] };
};

describe('a contract header sent more than once', () => {
  let server: TestServer;
  let agent: Agent;
  let credentials: string[][];
  beforeAll(async () => {
    server = await startServer('pglite');
    agent = await provisionAgent(server, ['tools:execute', 'connections:read']);
    credentials = [
      ['authorization', `Bearer ${agent.apiKey}`],
      ['x-service-client-id', agent.clientId],
    ];
  });
  afterAll(async () => {
    await server?.close();
  });

  const proxyBody = JSON.stringify({ toolId: 'nowhere:::nothing', parameters: {} });

  it('answers 400 on /proxyV2 for each of the four, whatever the copies hold', async () => {
    const cases: Array<[string, string[][]]> = [
      [
        'X-Service-User-Id',
        [
          ['x-service-user-id', 'u1'],
          ['x-service-user-id', 'u2'],
        ],
      ],
      [
        'X-Service-User-Id',
        [
          ['x-service-user-id', 'u1'],
          ['x-service-user-id', 'u1'],
        ],
      ],
      [
        'X-Service-Idempotency-Key',
        [
          ['x-service-idempotency-key', 'k1'],
          ['X-Service-Idempotency-Key', 'k2'],
        ],
      ],
      [
        'X-Service-App-Id',
        [
          ['x-service-app-id', 'a'],
          ['x-service-app-id', 'b'],
        ],
      ],
      ['X-Service-Client-Id', [['x-service-client-id', agent.clientId]]],
    ];
    for (const [header, lines] of cases) {
      const reply = await send(server.url, 'POST', '/proxyV2', [...credentials, ...lines], proxyBody);
      expect([header, reply.status, reply.body]).toEqual([header, 400, refused(header)]);
      expect(reply.requestId).toMatch(/\S/);
    }
  });

  it('answers the same over tRPC, MCP and /connections', async () => {
    const twice = [...credentials, ['x-service-user-id', 'u1'], ['x-service-user-id', 'u2']];
    const trpc = await send(server.url, 'POST', '/trpc/proxy.call', twice, proxyBody);
    const mcp = await send(
      server.url,
      'POST',
      '/mcp',
      [...twice, ['accept', 'application/json']],
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    );
    const connections = await send(server.url, 'GET', '/connections', twice);
    for (const reply of [mcp, connections])
      expect([reply.status, reply.body]).toEqual([400, refused('X-Service-User-Id')]);
    const contract = refused('X-Service-User-Id');
    expect([trpc.status, trpc.body]).toEqual([
      400,
      { error: { message: contract.message, code: -32600, data: { contract } } },
    ]);
  });

  it('still reads a value sent once that holds ", " of its own', async () => {
    const reply = await send(server.url, 'GET', '/connections', [
      ...credentials,
      ['x-service-user-id', 'Doe, Jane'],
    ]);
    expect([reply.status, reply.body]).toEqual([200, { connections: [] }]);
    // And a plain call is untouched.
    const plain = await call(server.url, 'GET', '/connections', {
      key: agent.apiKey,
      clientId: agent.clientId,
      headers: { 'x-service-user-id': 'u1' },
    });
    expect([plain.status, plain.body]).toEqual([200, { connections: [] }]);
  });
});
