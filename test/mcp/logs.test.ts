// Issue 23, item 12: the `request` log line of an MCP tool call says what the one of /proxyV2 says
// (docs/reference.md "Logs and metrics"): the key, the client, the tool and app, the upstream's
// status and time, and the contract code of a failure — on the direct path and through the SDK.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Agent, agentHeaders, proxy } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import type { TestServer } from '../support/server.ts';
import { startWorld, type World } from '../support/world.ts';
import { MODERN_HEADERS, modernCall, rawMcp } from './world.ts';

/** What a tool call's line says beyond the request itself (method, path, status, time). */
const CALL_FIELDS = ['keyId', 'clientId', 'toolId', 'appId', 'upstreamStatus', 'error', 'cause'] as const;

describeBackends('MCP request log lines', (backend) => {
  let world: World<'agent'>;
  let server: TestServer;
  let agent: Agent;
  let counter = 0;

  beforeAll(async () => {
    world = await startWorld(backend.name, {
      apps: { plain: { provider: 'acme.plain' } },
      agents: { agent: ['tools:execute'] },
    });
    ({ server } = world);
    agent = world.agents.agent;
  });
  afterAll(async () => {
    await world?.close();
  });

  /** The `request` line of the request with this id. */
  function requestLine(requestId: string): Record<string, unknown> {
    const line = server.logs
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.msg === 'request' && entry.requestId === requestId);
    if (!line) throw new Error(`no request line for ${requestId}`);
    return line;
  }

  const callFields = (line: Record<string, unknown>) =>
    Object.fromEntries(CALL_FIELDS.filter((name) => name in line).map((name) => [name, line[name]]));

  async function viaRest(parameters: Record<string, unknown>): Promise<Record<string, unknown>> {
    const requestId = `rest-${++counter}`;
    await proxy(server, agent, { toolId: 'plain:::getStatus', parameters }, { 'x-request-id': requestId });
    return requestLine(requestId);
  }

  async function viaMcp(
    parameters: Record<string, unknown>,
    path: 'direct' | 'sdk',
  ): Promise<Record<string, unknown>> {
    const requestId = `mcp-${++counter}`;
    const headers = { ...agentHeaders(agent), 'x-request-id': requestId };
    // A 2025-era call has no direct path: the SDK serves it.
    const reply =
      path === 'direct'
        ? await rawMcp(server.url, modernCall(1, 'plain__getStatus', parameters), {
            ...headers,
            ...MODERN_HEADERS,
            'mcp-name': 'plain__getStatus',
          })
        : await rawMcp(
            server.url,
            JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: { name: 'plain__getStatus', arguments: parameters },
            }),
            { ...headers, 'mcp-protocol-version': '2025-11-25' },
          );
    expect(reply.status).toBe(200);
    return requestLine(requestId);
  }

  it.each([
    ['a success', { code: 200 }],
    ['an upstream error', { code: 404 }],
    ['invalid parameters', { code: 'two hundred' }],
  ])('carries what the /proxyV2 line carries for %s', async (_label, parameters) => {
    const rest = await viaRest(parameters);
    expect(rest).toMatchObject({ keyId: agent.keyId, clientId: agent.clientId, toolId: 'plain:::getStatus' });
    for (const path of ['direct', 'sdk'] as const) {
      const mcp = await viaMcp(parameters, path);
      expect(mcp).toMatchObject({ method: 'POST', path: '/mcp', status: 200 });
      expect(callFields(mcp)).toEqual(callFields(rest));
      expect('upstreamMs' in mcp).toBe('upstreamMs' in rest);
    }
  });
});
