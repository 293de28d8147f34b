import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, provisionAgent, proxy, registerApp } from '../support/agent.ts';
import { freePort } from '../support/ports.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

/**
 * What an operator sees of tool calls: one `request` log line per call naming the contract code,
 * tool, app, client, key, upstream status, time and the cause of an unreachable upstream; and
 * Prometheus series per app and tool, with bounded labels.
 */

const DOCUMENT = {
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1' },
  paths: {
    '/pets/{petId}': {
      get: {
        operationId: 'getPet',
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { '200': { description: 'A pet' } },
      },
    },
  },
};

let server: TestServer;
let upstream: Server;
let agent: Agent;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const found = req.url === '/pets/1';
    res.writeHead(found ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(found ? { id: 1, name: 'Rex' } : { message: 'no such pet' }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  server = await startServer('pglite', { env: { RATE_LIMIT_PER_KEY_PER_MIN: '5' } });
  agent = await provisionAgent(server, ['tools:execute']);
  const registration = { provider: 'acme.pets', openapi: DOCUMENT, auth: { type: 'none' } };
  await registerApp(server, 'pets', { ...registration, baseUrl: base });
  await registerApp(server, 'down', { ...registration, baseUrl: `http://127.0.0.1:${await freePort()}` });
});
afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

/** The `request` log line of the answer with this request id. */
function requestLine(requestId: string | null): Record<string, unknown> {
  const line = server.logs
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .find((entry) => entry.msg === 'request' && entry.requestId === requestId);
  if (!line) throw new Error(`no request line for ${requestId}`);
  return line;
}

describe('tool calls in the log and in /metrics', () => {
  it('logs one line per call with its code, ids, upstream status and time, never a secret', async () => {
    const ok = await proxy(server, agent, { toolId: 'pets:::getPet', parameters: { petId: 1 } });
    expect(ok.status).toBe(200);
    const okLine = requestLine(ok.headers.get('x-request-id'));
    expect(okLine).toMatchObject({
      method: 'POST',
      path: '/proxyV2',
      status: 200,
      keyId: agent.keyId,
      clientId: agent.clientId,
      toolId: 'pets:::getPet',
      appId: 'pets',
      upstreamStatus: 200,
    });
    expect(okLine.upstreamMs).toEqual(expect.any(Number));
    expect(okLine).not.toHaveProperty('error');

    const missing = await proxy(server, agent, { toolId: 'pets:::getPet', parameters: { petId: 2 } });
    expect(missing.body.error).toBe('upstream_error');
    expect(requestLine(missing.headers.get('x-request-id'))).toMatchObject({
      status: 502,
      error: 'upstream_error',
      toolId: 'pets:::getPet',
      upstreamStatus: 404,
    });

    const down = await proxy(server, agent, { toolId: 'down:::getPet', parameters: { petId: 1 } });
    expect(down.body.error).toBe('upstream_unreachable');
    const downLine = requestLine(down.headers.get('x-request-id'));
    expect(downLine).toMatchObject({
      status: 502,
      error: 'upstream_unreachable',
      appId: 'down',
      cause: 'ECONNREFUSED',
    });
    expect(downLine).not.toHaveProperty('upstreamStatus');

    const badKey = await call(server.url, 'POST', '/proxyV2', {
      key: 'tg_key_aaaaaaaaaaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb',
      clientId: agent.clientId,
      body: { toolId: 'pets:::getPet', parameters: { petId: 1 } },
    });
    expect(requestLine(badKey.headers.get('x-request-id'))).toMatchObject({
      status: 401,
      error: 'invalid_api_key',
    });
    expect(server.logs.join('\n')).not.toContain(agent.apiKey.slice(agent.apiKey.lastIndexOf('_') + 1));
  });

  it('counts calls by app, tool and outcome, upstream time, replays and rate-limit refusals', async () => {
    // This file's key has made 3 calls of its 5 a minute: a replay, then refusals.
    const headers = { 'x-service-idempotency-key': 'order-1' };
    const first = await proxy(server, agent, { toolId: 'pets:::getPet', parameters: { petId: 1 } }, headers);
    const again = await proxy(server, agent, { toolId: 'pets:::getPet', parameters: { petId: 1 } }, headers);
    expect([first.status, again.headers.get('x-service-idempotent-replayed')]).toEqual([200, 'true']);
    const refused = await proxy(server, agent, { toolId: 'pets:::getPet', parameters: { petId: 1 } });
    expect(refused.body.error).toBe('rate_limited');
    await proxy(server, agent, { toolId: 'nope:::getPet', parameters: {} });

    const text = (await call(server.url, 'GET', '/metrics')).text;
    const series = (name: string) =>
      text
        .split('\n')
        .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
        .sort();
    expect(series('toolgate_tool_calls_total')).toEqual([
      'toolgate_tool_calls_total{app="-",tool="-",outcome="rate_limited"} 2',
      'toolgate_tool_calls_total{app="down",tool="getPet",outcome="upstream_unreachable"} 1',
      'toolgate_tool_calls_total{app="pets",tool="getPet",outcome="ok"} 3',
      'toolgate_tool_calls_total{app="pets",tool="getPet",outcome="upstream_error"} 1',
    ]);
    expect(series('toolgate_upstream_duration_seconds_count')).toEqual([
      'toolgate_upstream_duration_seconds_count{app="down",tool="getPet"} 1',
      'toolgate_upstream_duration_seconds_count{app="pets",tool="getPet"} 3',
    ]);
    expect(series('toolgate_idempotency_replays_total')).toEqual([
      'toolgate_idempotency_replays_total{app="pets"} 1',
    ]);
    expect(series('toolgate_rate_limited_total')).toEqual(['toolgate_rate_limited_total 2']);
    expect(text).toContain('# TYPE toolgate_oauth_refreshes_total counter');
    expect(text).not.toContain(agent.clientId);
    expect(text).not.toContain(agent.keyId);
  });
});
