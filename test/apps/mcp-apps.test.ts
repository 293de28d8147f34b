/**
 * Apps from MCP servers (docs/reference.md "Apps from MCP servers"), end to end on every backend:
 * registration reads a real server's tools/list (server-everything, a 2025-era stateful server; and
 * servers of the v2 SDK, which toolgate reaches in the 2026-07-28 era), and calls go through
 * /proxyV2, tRPC and /mcp to the server's tools/call.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, agentHeaders, asAgent, provisionAgent, proxy, registerApp } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import {
  type RunningServer,
  startEverything,
  startMcpServer,
  type TestMcpServer,
  type TestTool,
} from '../support/mcp-upstream.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

const API_KEY = 'mcp-upstream-api-key-do-not-leak';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const EVERYTHING_TOOLS = [
  'echo',
  'get-annotated-message',
  'get-env',
  'get-resource-links',
  'get-resource-reference',
  'get-structured-content',
  'get-sum',
  'get-tiny-image',
  'gzip-file-as-resource',
  'toggle-simulated-logging',
  'toggle-subscriber-updates',
  'trigger-long-running-operation',
  'simulate-research-query',
];

/** The tools of the v2 test server: an api_key app's whole repertoire. */
function testTools(calls: { count: number }): TestTool[] {
  return [
    {
      name: 'whoami',
      title: 'Who am I',
      description: 'Says which credential the call carried.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: () => ({ content: [{ type: 'text', text: 'you' }], structuredContent: { you: true } }),
    },
    {
      name: 'leak',
      description: 'Echoes the API key it was called with (a careless server).',
      inputSchema: { type: 'object', properties: { say: { type: 'string' } }, required: ['say'] },
      run: (args: Record<string, unknown>) => ({
        content: [{ type: 'text', text: `key=${API_KEY} said ${String(args.say)}` }],
      }),
    },
    {
      name: 'fail',
      description: 'Always fails as a tool.',
      run: () => ({ content: [{ type: 'text', text: 'it broke' }], isError: true }),
    },
    {
      name: 'count',
      description: 'Counts its calls.',
      run: () => {
        calls.count += 1;
        return { content: [], structuredContent: { count: calls.count } };
      },
    },
    {
      name: 'huge',
      description: 'Answers three megabytes.',
      run: () => ({ content: [{ type: 'text', text: 'x'.repeat(3 * 1024 * 1024) }] }),
    },
    {
      name: 'stall',
      description: 'Never answers.',
      run: () => new Promise(() => {}),
    },
    {
      name: 'with defs',
      description: 'A schema with local definitions.',
      inputSchema: {
        type: 'object',
        properties: { where: { $ref: '#/$defs/place' } },
        required: ['where'],
        $defs: { place: { type: 'string', enum: ['here', 'there'] } },
      },
      run: (args: Record<string, unknown>) => ({ content: [], structuredContent: { went: args.where } }),
    },
    {
      name: 'external',
      description: 'A schema that points outside itself.',
      inputSchema: { type: 'object', properties: { a: { $ref: 'https://example.com/schema.json' } } },
    },
  ];
}

describeBackends('apps from MCP servers', (backend) => {
  let server: TestServer;
  let everything: RunningServer;
  let upstream: TestMcpServer;
  let agent: Agent;
  const calls = { count: 0 };

  beforeAll(async () => {
    [server, everything, upstream] = await Promise.all([
      startServer(backend.name, {
        // Generous: a loaded CI machine may take seconds per call; the stall case waits this long.
        env: { MAX_UPSTREAM_BODY_BYTES: String(2 * 1024 * 1024), UPSTREAM_TIMEOUT_MS: '8000' },
      }),
      startEverything(),
      startMcpServer({
        tools: testTools(calls),
        pageSize: 3,
        intercept: (req, res) => {
          if (req.headers['x-api-key'] === API_KEY) return false;
          res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"no key"}');
          return true;
        },
      }),
    ]);
    agent = await provisionAgent(server);
    await registerApp(server, 'everything', {
      provider: 'modelcontextprotocol.everything',
      mcp: { url: everything.url },
      auth: { type: 'none' },
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([server?.close(), everything?.close(), upstream?.close()]);
  });

  describe('registration', () => {
    it('reads every tool of server-everything, and GET /admin/apps shows the server', async () => {
      const put = await call(server.url, 'PUT', '/admin/apps/everything', {
        key: server.adminKey,
        body: {
          provider: 'modelcontextprotocol.everything',
          mcp: { url: everything.url },
          auth: { type: 'none' },
        },
      });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ appId: 'everything', tools: EVERYTHING_TOOLS, skipped: [] });
      const got = await call(server.url, 'GET', '/admin/apps/everything', { key: server.adminKey });
      expect(got.status).toBe(200);
      expect(got.body).toEqual({
        appId: 'everything',
        provider: 'modelcontextprotocol.everything',
        baseUrl: everything.url,
        mcp: { url: everything.url },
        auth: { type: 'none' },
        tools: EVERYTHING_TOOLS,
        skipped: [],
        updatedAt: expect.stringMatching(ISO),
      });
    });

    it('reads every page with the api_key header, names tools by the rule and skips what cannot be served', async () => {
      const put = await call(server.url, 'PUT', '/admin/apps/keyed', {
        key: server.adminKey,
        body: {
          provider: 'example.keyed',
          mcp: { url: upstream.url },
          auth: { type: 'api_key', in: 'header', name: 'X-Api-Key', value: API_KEY },
        },
      });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({
        appId: 'keyed',
        tools: ['whoami', 'leak', 'fail', 'count', 'huge', 'stall', 'with_defs'],
        skipped: [
          {
            method: 'MCP',
            path: 'external',
            reason:
              'External reference "https://example.com/schema.json" (only references inside the document are followed).',
          },
        ],
      });
      // Pages of three: initialize's era aside, tools/list was read three times.
      expect(upstream.received.filter((r) => r.method === 'tools/list')).toHaveLength(3);
      const got = await call(server.url, 'GET', '/admin/apps/keyed', { key: server.adminKey });
      expect(got.body.auth).toEqual({ type: 'api_key', in: 'header', name: 'X-Api-Key' });
      expect(got.text).not.toContain(API_KEY);
    });

    it('refuses an api_key in the query, a base URL, and both openapi and mcp, at their pointers', async () => {
      const put = await call(server.url, 'PUT', '/admin/apps/wrong', {
        key: server.adminKey,
        body: {
          provider: 'example.wrong',
          baseUrl: 'https://a.example',
          openapi: { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {} },
          mcp: { url: upstream.url },
          auth: { type: 'api_key', in: 'query', name: 'key', value: API_KEY },
        },
      });
      expect(put.status).toBe(400);
      expect(put.body).toEqual({
        ok: false,
        error: 'invalid_request',
        message: 'The app registration has problems.',
        issues: [
          {
            path: '/openapi',
            message: 'An app comes from an OpenAPI document or from an MCP server, not both.',
          },
          {
            path: '/baseUrl',
            message: 'An app from an MCP server is called at mcp.url; it has no base URL.',
          },
          { path: '/auth/in', message: 'An MCP server takes its API key in a header.' },
        ],
      });
    });

    it('refuses a registration with neither openapi nor mcp', async () => {
      const put = await call(server.url, 'PUT', '/admin/apps/nothing', {
        key: server.adminKey,
        body: { provider: 'example.nothing', auth: { type: 'none' } },
      });
      expect(put.status).toBe(400);
      expect(put.body).toEqual({
        ok: false,
        error: 'invalid_request',
        message: 'The request does not have the expected shape.',
        issues: [
          {
            path: '/openapi',
            message: 'Required value is missing: an OpenAPI document (openapi), or an MCP server (mcp).',
          },
        ],
      });
    });
  });

  describe('the tools beside OpenAPI tools', () => {
    it('GET /tools shows an MCP tool with method MCP, its name upstream as path, its title and schema', async () => {
      const reply = await call(server.url, 'GET', '/tools?appId=everything', asAgent(agent));
      expect(reply.status).toBe(200);
      const tool = reply.body.tools.find((t: { name: string }) => t.name === 'get-structured-content');
      expect(tool).toEqual({
        toolId: 'everything:::get-structured-content',
        appId: 'everything',
        name: 'get-structured-content',
        title: 'Get Structured Content Tool',
        method: 'MCP',
        path: 'get-structured-content',
        description: 'Returns structured content along with an output schema for client data validation',
        parameters: {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          properties: {
            location: {
              type: 'string',
              enum: ['New York', 'Chicago', 'Los Angeles'],
              description: 'Choose city',
            },
          },
          required: ['location'],
        },
        requiresUserAuth: false,
        scopes: [],
      });
    });

    it('the §10 search finds an MCP tool by what it does', async () => {
      const reply = await call(
        server.url,
        'GET',
        `/tools?q=${encodeURIComponent('add two numbers')}&appId=everything`,
        asAgent(agent),
      );
      expect(reply.status).toBe(200);
      expect(reply.body.tools[0].toolId).toBe('everything:::get-sum');
    });
  });

  describe('calls', () => {
    it('/proxyV2 answers structuredContent as data', async () => {
      const reply = await proxy(server, agent, {
        toolId: 'everything:::get-structured-content',
        parameters: { location: 'Chicago' },
      });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        ok: true,
        data: {
          temperature: expect.any(Number),
          conditions: expect.any(String),
          humidity: expect.any(Number),
        },
        meta: {
          tool_id: 'everything:::get-structured-content',
          duration_ms: expect.any(Number),
          provider: 'modelcontextprotocol.everything',
        },
      });
    });

    it('answers the content blocks when there is no structuredContent, and validates parameters first', async () => {
      const echoed = await proxy(server, agent, {
        toolId: 'everything:::echo',
        parameters: { message: 'hi' },
      });
      expect(echoed.status).toBe(200);
      expect(echoed.body.data).toEqual([{ type: 'text', text: 'Echo: hi' }]);
      const wrong = await proxy(server, agent, { toolId: 'everything:::echo', parameters: { message: 5 } });
      expect(wrong.status).toBe(400);
      expect(wrong.body).toEqual({
        ok: false,
        error: 'invalid_parameters',
        message: expect.any(String),
        tool_id: 'everything:::echo',
        issues: [{ path: '/message', message: expect.any(String) }],
      });
    });

    it('tRPC runs the same call', async () => {
      const reply = await call(server.url, 'POST', '/trpc/proxy', {
        ...asAgent(agent),
        body: { toolId: 'everything:::get-sum', parameters: { a: 2, b: 3 } },
      });
      expect(reply.status).toBe(200);
      expect(reply.body.result.data.data).toEqual([{ type: 'text', text: 'The sum of 2 and 3 is 5.' }]);
    });

    it("an MCP client sees the tool with its server's annotations and calls it", async () => {
      const client = new Client({ name: 'downstream', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/mcp?apps=keyed', server.url), {
          requestInit: { headers: agentHeaders(agent) },
        }),
      );
      try {
        const { tools } = await client.listTools();
        expect(tools.find((t) => t.name === 'keyed__whoami')).toEqual({
          name: 'keyed__whoami',
          title: 'Who am I',
          description: 'Says which credential the call carried.',
          inputSchema: {
            $schema: 'https://json-schema.org/draft/2020-12/schema',
            type: 'object',
            properties: {},
            additionalProperties: false,
          },
          annotations: { readOnlyHint: true, openWorldHint: false },
          _meta: { 'toolgate/toolId': 'keyed:::whoami' },
        });
        const result = await client.callTool({ name: 'keyed__with_defs', arguments: { where: 'there' } });
        expect(result.structuredContent).toEqual({
          ok: true,
          data: { went: 'there' },
          meta: { tool_id: 'keyed:::with_defs', duration_ms: expect.any(Number), provider: 'example.keyed' },
        });
      } finally {
        await client.close();
      }
    });

    it('redacts the API key toolgate sent from what the server answers', async () => {
      const reply = await proxy(server, agent, { toolId: 'keyed:::leak', parameters: { say: 'hello' } });
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual([{ type: 'text', text: 'key=[REDACTED] said hello' }]);
      expect(reply.text).not.toContain(API_KEY);
    });

    it('a result with isError is 502 upstream_error with the result as upstream_body', async () => {
      const reply = await proxy(server, agent, { toolId: 'keyed:::fail', parameters: {} });
      expect(reply.status).toBe(502);
      expect(reply.body).toEqual({
        ok: false,
        error: 'upstream_error',
        message: 'The MCP server answered the call with a tool error (isError).',
        upstream_status: 200,
        // The result as the server wrote it (the 2026-07-28 era adds its identity under _meta).
        upstream_body: JSON.stringify({
          _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'test-upstream', version: '1.0.0' } },
          content: [{ type: 'text', text: 'it broke' }],
          isError: true,
        }),
      });
    });

    it('a result over MAX_UPSTREAM_BODY_BYTES is 502 upstream_too_large', async () => {
      const reply = await proxy(server, agent, { toolId: 'keyed:::huge', parameters: {} });
      expect(reply.status).toBe(502);
      expect(reply.body).toEqual({
        ok: false,
        error: 'upstream_too_large',
        message: `The MCP server answered more than ${2 * 1024 * 1024} bytes.`,
        limit: 2 * 1024 * 1024,
      });
    });

    it('a server that does not answer in time is 504 upstream_timeout', async () => {
      const reply = await proxy(server, agent, { toolId: 'keyed:::stall', parameters: {} });
      expect(reply.status).toBe(504);
      expect(reply.body).toEqual({
        ok: false,
        error: 'upstream_timeout',
        message: 'The MCP server did not answer in time.',
      });
    }, 60_000);

    it('an idempotency key runs the upstream tools/call once', async () => {
      const headers = { 'X-Service-Idempotency-Key': `mcp-${backend.name}` };
      const first = await proxy(server, agent, { toolId: 'keyed:::count', parameters: {} }, headers);
      const again = await proxy(server, agent, { toolId: 'keyed:::count', parameters: {} }, headers);
      expect(first.status).toBe(200);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('x-service-idempotent-replayed')).toBe('true');
      expect(calls.count).toBe(1);
    });
  });

  describe('refresh', () => {
    it('reads the list again; an OpenAPI app or an unknown one is refused', async () => {
      const tools: TestTool[] = [{ name: 'one' }];
      const changing = await startMcpServer({ tools });
      try {
        expect(
          await registerApp(server, 'changing', {
            provider: 'example.changing',
            mcp: { url: changing.url },
            auth: { type: 'none' },
          }),
        ).toEqual(['one']);
        tools.push({ name: 'two', description: 'The second one.' });
        const refreshed = await call(server.url, 'POST', '/admin/apps/changing/refresh', {
          key: server.adminKey,
        });
        expect(refreshed.status).toBe(200);
        expect(refreshed.body).toEqual({ appId: 'changing', tools: ['one', 'two'], skipped: [] });
        const listed = await call(server.url, 'GET', '/tools?appId=changing', asAgent(agent));
        expect(listed.body.tools.map((t: { name: string }) => t.name)).toEqual(['one', 'two']);
      } finally {
        await changing.close();
      }
      await registerApp(server, 'plain', {
        provider: 'example.plain',
        baseUrl: 'https://a.example',
        openapi: {
          openapi: '3.1.0',
          info: { title: 'p', version: '1' },
          paths: { '/p': { get: { operationId: 'p', responses: { 200: { description: 'p' } } } } },
        },
        auth: { type: 'none' },
      });
      const openapi = await call(server.url, 'POST', '/admin/apps/plain/refresh', { key: server.adminKey });
      expect(openapi.status).toBe(400);
      expect(openapi.body).toEqual({
        ok: false,
        error: 'invalid_request',
        message: 'The app registration has problems.',
        issues: [
          {
            path: '',
            message: 'App plain comes from an OpenAPI document: register it again to change its tools.',
          },
        ],
      });
      const unknown = await call(server.url, 'POST', '/admin/apps/nope/refresh', { key: server.adminKey });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({
        ok: false,
        error: 'app_not_found',
        message: 'No app nope is registered.',
        app_id: 'nope',
      });
    });
  });
});
