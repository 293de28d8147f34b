/**
 * The call log (docs/reference.md "Call log"): one record per tool call on every surface (REST,
 * tRPC, MCP direct and SDK paths), refused calls included; GET /admin/calls with its filters and
 * cursor paging, over REST and tRPC; nothing of a call's parameters, bodies or tokens stored.
 */
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTrpcClient } from '../../sdk/src/trpc.ts';
import { HEADER } from '../../shared/headers.ts';
import { type Agent, agentHeaders, asAgent, provisionAgent, registerApp } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { call, startServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/** A value that must never reach the call log (a parameter, a body, a user's data). */
const MARKER = 'marker-7f3c9a-never-logged';

describeBackends('the call log', (backend) => {
  let server: TestServer;
  let upstream: Upstream;
  let agent: Agent;
  let narrow: Agent;
  let other: Agent;

  const admin = (path: string) => call(server.url, 'GET', path, { key: server.adminKey });
  const rest = (who: Agent, requestId: string, body: unknown, headers: Record<string, string> = {}) =>
    call(server.url, 'POST', '/proxyV2', {
      ...asAgent(who, { [HEADER.requestId]: requestId, ...headers }),
      body,
    });
  const mcpRaw = (requestId: string, name: string, args: Record<string, unknown>) =>
    fetch(new URL('/mcp', server.url), {
      method: 'POST',
      headers: {
        ...agentHeaders(agent, 'u-mcp'),
        [HEADER.requestId]: requestId,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': name,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name,
          arguments: args,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });

  /** The expected record of a call (times and ids are the server's). */
  const record = (fields: Record<string, unknown>) => ({
    id: expect.stringMatching(/^\d+$/),
    at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    durationMs: expect.any(Number),
    keyId: agent.keyId,
    clientId: agent.clientId,
    userId: null,
    appId: 'logged',
    upstreamStatus: null,
    idempotentReplay: false,
    ...fields,
  });

  beforeAll(async () => {
    [server, upstream] = await Promise.all([startServer(backend.name), startUpstream()]);
    await registerApp(server, 'logged', {
      provider: 'acme.logged',
      openapi: upstream.openapi,
      auth: { type: 'none' },
    });
    [agent, narrow, other] = await Promise.all([
      provisionAgent(server, ['tools:execute']),
      provisionAgent(server, ['tools:execute:elsewhere']),
      provisionAgent(server, ['tools:execute']),
    ]);

    // One call of each kind, in order, each under its own request id.
    const answers = [
      await rest(
        agent,
        'r-ok',
        { toolId: 'logged:::getItem', parameters: { itemId: MARKER } },
        {
          [HEADER.userId]: 'u-1',
          [HEADER.idempotencyKey]: 'idem-1',
        },
      ),
      await rest(
        agent,
        'r-replay',
        { toolId: 'logged:::getItem', parameters: { itemId: MARKER } },
        {
          [HEADER.userId]: 'u-1',
          [HEADER.idempotencyKey]: 'idem-1',
        },
      ),
      await rest(agent, 'r-unknown', { toolId: 'logged:::noSuchTool', parameters: {} }),
      await rest(agent, 'r-params', { toolId: 'logged:::getItem', parameters: { nope: MARKER } }),
      await rest(agent, 'r-shape', { toolId: 'logged:::getItem', parameters: MARKER }),
      await rest(agent, 'r-upstream', { toolId: 'logged:::getStatus', parameters: { code: 503 } }),
      await rest(narrow, 'r-scope', { toolId: 'logged:::getItem', parameters: { itemId: '1' } }),
      await rest(other, 'r-other', { toolId: 'logged:::getItem', parameters: { itemId: '2' } }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 404, 400, 400, 502, 403, 200]);

    const trpcRequestIds = ['t-ok', 't-ok-2'];
    const trpc = createTrpcClient({
      baseUrl: server.url,
      apiKey: agent.apiKey,
      clientId: agent.clientId,
      headers: () => ({ [HEADER.requestId]: trpcRequestIds.shift() ?? 't-more' }),
    });
    await trpc.proxy.mutate({ toolId: 'logged:::getItem', parameters: { itemId: MARKER } });
    const refused = await trpc.proxy.mutate({ toolId: 42 } as never).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Error);

    // The MCP direct path (a plain modern tools/call) and the SDK's (an unknown tool, a 2025 client).
    expect((await mcpRaw('m-direct', 'logged__getItem', { itemId: MARKER })).status).toBe(200);
    expect((await mcpRaw('m-unknown', 'logged__nothing', {})).status).toBe(200);
    const v1 = new V1Client({ name: 'log-test', version: '1' });
    await v1.connect(
      new V1Transport(new URL('/mcp', server.url), {
        requestInit: { headers: { ...agentHeaders(agent, 'u-v1'), [HEADER.requestId]: 'm-sdk' } },
      }),
    );
    await v1.callTool({ name: 'logged__getItem', arguments: { itemId: MARKER } });
    await v1.close();

    await server.app.deps.callLog.flush();
  }, 120_000);

  afterAll(async () => {
    await Promise.all([server?.close(), upstream?.close()]);
  });

  it('holds one record per tool call on every surface, refused ones included, newest first', async () => {
    const reply = await admin(`/admin/calls?clientId=${agent.clientId}`);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      calls: [
        record({
          surface: 'mcp',
          requestId: 'm-sdk',
          userId: 'u-v1',
          toolId: 'logged:::getItem',
          outcome: 'ok',
          status: 200,
          upstreamStatus: 200,
        }),
        record({
          surface: 'mcp',
          requestId: 'm-unknown',
          userId: 'u-mcp',
          appId: null,
          toolId: 'logged__nothing',
          outcome: 'tool_not_found',
          status: 404,
        }),
        record({
          surface: 'mcp',
          requestId: 'm-direct',
          userId: 'u-mcp',
          toolId: 'logged:::getItem',
          outcome: 'ok',
          status: 200,
          upstreamStatus: 200,
        }),
        record({
          surface: 'trpc',
          requestId: 't-ok-2',
          appId: null,
          toolId: null,
          outcome: 'invalid_request',
          status: 400,
        }),
        record({
          surface: 'trpc',
          requestId: 't-ok',
          toolId: 'logged:::getItem',
          outcome: 'ok',
          status: 200,
          upstreamStatus: 200,
        }),
        record({
          surface: 'rest',
          requestId: 'r-upstream',
          toolId: 'logged:::getStatus',
          outcome: 'upstream_error',
          status: 502,
          upstreamStatus: 503,
        }),
        record({
          surface: 'rest',
          requestId: 'r-shape',
          appId: null,
          toolId: 'logged:::getItem',
          outcome: 'invalid_request',
          status: 400,
        }),
        record({
          surface: 'rest',
          requestId: 'r-params',
          toolId: 'logged:::getItem',
          outcome: 'invalid_parameters',
          status: 400,
        }),
        record({
          surface: 'rest',
          requestId: 'r-unknown',
          appId: null,
          toolId: 'logged:::noSuchTool',
          outcome: 'tool_not_found',
          status: 404,
        }),
        record({
          surface: 'rest',
          requestId: 'r-replay',
          userId: 'u-1',
          toolId: 'logged:::getItem',
          outcome: 'ok',
          status: 200,
          idempotentReplay: true,
        }),
        record({
          surface: 'rest',
          requestId: 'r-ok',
          userId: 'u-1',
          toolId: 'logged:::getItem',
          outcome: 'ok',
          status: 200,
          upstreamStatus: 200,
        }),
      ],
    });
    const scoped = await admin(`/admin/calls?clientId=${narrow.clientId}`);
    expect(scoped.body).toEqual({
      calls: [
        record({
          surface: 'rest',
          requestId: 'r-scope',
          keyId: narrow.keyId,
          clientId: narrow.clientId,
          toolId: 'logged:::getItem',
          outcome: 'rbac_denied',
          status: 403,
        }),
      ],
    });
  });

  it('stores no parameter, body or token of any call', async () => {
    const rows = await server.app.deps.db.prisma.$queryRawUnsafe<unknown[]>('SELECT * FROM call_log');
    const text = JSON.stringify(rows, (_key, value) => (typeof value === 'bigint' ? String(value) : value));
    expect(rows.length).toBe(13);
    for (const secret of [MARKER, agent.apiKey, narrow.apiKey, other.apiKey, server.adminKey])
      expect(text).not.toContain(secret);
  });

  it('filters by user, app, tool, outcome and time, exactly', async () => {
    const ids = async (query: string) => {
      const reply = await admin(`/admin/calls?${query}`);
      expect(reply.status).toBe(200);
      return reply.body.calls.map((c: { requestId: string }) => c.requestId);
    };
    expect(await ids(`clientId=${agent.clientId}&outcome=ok`)).toEqual([
      'm-sdk',
      'm-direct',
      't-ok',
      'r-replay',
      'r-ok',
    ]);
    expect(await ids('outcome=tool_not_found')).toEqual(['m-unknown', 'r-unknown']);
    expect(await ids(`clientId=${agent.clientId}&userId=u-1`)).toEqual(['r-replay', 'r-ok']);
    expect(await ids('toolId=logged:::getStatus')).toEqual(['r-upstream']);
    expect(await ids(`appId=logged&clientId=${other.clientId}`)).toEqual(['r-other']);
    const all = (await admin('/admin/calls')).body.calls as { at: string; requestId: string }[];
    expect(all).toHaveLength(13);
    const middle = all[6] as { at: string };
    const since = await ids(`since=${encodeURIComponent(middle.at)}`);
    const until = await ids(`until=${encodeURIComponent(middle.at)}`);
    expect([...since, ...until].sort()).toEqual(all.map((c) => c.requestId).sort());
    expect(since.length).toBeGreaterThan(0);
    expect(await ids('since=2999-01-01T00:00:00Z')).toEqual([]);
  });

  it('pages by cursor, newest first, without a gap or a repeat', async () => {
    const all = (await admin('/admin/calls')).body.calls;
    const seen: unknown[] = [];
    let path = '/admin/calls?limit=4';
    for (let page = 0; page < 10; page += 1) {
      const reply = await admin(path);
      expect(reply.status).toBe(200);
      seen.push(...reply.body.calls);
      if (!reply.body.next_cursor) break;
      expect(reply.body.calls).toHaveLength(4);
      path = `/admin/calls?limit=4&cursor=${reply.body.next_cursor}`;
    }
    expect(seen).toEqual(all);
  });

  it('answers the same page over tRPC', async () => {
    const trpc = createTrpcClient({ baseUrl: server.url, apiKey: server.adminKey, clientId: 'unused' });
    const page = await trpc.admin.calls.list.query({ clientId: agent.clientId, limit: 3 });
    expect(page).toEqual((await admin(`/admin/calls?clientId=${agent.clientId}&limit=3`)).body);
  });

  it('refuses a cursor not of ours, a bad time or limit, and a key without scope admin', async () => {
    expect(await admin('/admin/calls?cursor=bm90LWEtY3Vyc29y')).toMatchObject({ status: 400 });
    expect((await admin('/admin/calls?cursor=bm90LWEtY3Vyc29y')).body).toEqual({
      ok: false,
      error: 'invalid_request',
      message: 'The cursor is not one this server gave.',
      issues: [{ path: '/cursor', message: 'Must be the next_cursor of a previous page.' }],
    });
    const forged = Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', '99999999999999999999'])).toString(
      'base64url',
    );
    expect((await admin(`/admin/calls?cursor=${forged}`)).status).toBe(400);
    const since = await admin('/admin/calls?since=yesterday');
    expect(since.status).toBe(400);
    expect(since.body).toEqual({
      ok: false,
      error: 'invalid_request',
      message: 'The request does not have the expected shape.',
      issues: [{ path: '/since', message: 'Must be an RFC 3339 date-time with a zone.' }],
    });
    expect((await admin('/admin/calls?limit=0')).status).toBe(400);
    expect((await admin('/admin/calls?limit=1001')).status).toBe(400);
    const denied = await call(server.url, 'GET', '/admin/calls', { key: agent.apiKey });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({
      ok: false,
      error: 'rbac_denied',
      message: expect.any(String),
      reason: 'scope_missing',
      scope: 'admin',
    });
    expect((await call(server.url, 'GET', '/admin/calls')).status).toBe(401);
  });

  it('is described in /openapi.json with its filters', async () => {
    const spec = (await call(server.url, 'GET', '/openapi.json')).body;
    const operation = spec.paths['/admin/calls'].get;
    expect(operation.parameters.map((p: { name: string }) => p.name).sort()).toEqual(
      ['appId', 'clientId', 'cursor', 'limit', 'outcome', 'since', 'toolId', 'until', 'userId'].sort(),
    );
    expect(Object.keys(operation.responses)).toContain('200');
  });
});
