/**
 * Registering an MCP server that is not one, or a hostile one (docs/reference.md "Apps from MCP
 * servers"): each answers a clear 400 or 502 with its reason, never a 500, and nothing is stored —
 * a failed replacement leaves the registered app as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionAgent, proxy, registerApp } from '../support/agent.ts';
import { startMcpServer, startPlainServer, type TestTool } from '../support/mcp-upstream.ts';
import { freePort } from '../support/ports.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

const PROBLEMS = 'The app registration has problems.';
const LIMIT = 2 * 1024 * 1024;

describe('registering bad MCP servers', () => {
  let server: TestServer;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    server = await startServer('pglite', {
      // Generous: under a loaded CI machine a real answer may take seconds; the hang case waits this long.
      env: { MAX_UPSTREAM_BODY_BYTES: String(LIMIT), UPSTREAM_TIMEOUT_MS: '8000' },
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([server?.close(), ...closers.map((close) => close())]);
  });

  const register = (appId: string, url: string) =>
    call(server.url, 'PUT', `/admin/apps/${appId}`, {
      key: server.adminKey,
      body: { provider: 'example.bad', mcp: { url }, auth: { type: 'none' } },
    });

  const refusedAtUrl = (message: string) => ({
    ok: false,
    error: 'invalid_request',
    message: PROBLEMS,
    issues: [{ path: '/mcp/url', message }],
  });

  async function expectNotStored(appId: string) {
    const got = await call(server.url, 'GET', `/admin/apps/${appId}`, { key: server.adminKey });
    expect(got.status).toBe(404);
  }

  it('a URL that is not an MCP server', async () => {
    const plain = await startPlainServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>nothing here</h1>');
    });
    closers.push(plain.close);
    const reply = await register('notmcp', plain.url);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual(
      refusedAtUrl('This URL is not an MCP server (Streamable HTTP): it answered HTTP 404.'),
    );
    await expectNotStored('notmcp');
  });

  it('a server that answers 200 with something that is not JSON-RPC', async () => {
    const plain = await startPlainServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}');
    });
    closers.push(plain.close);
    const reply = await register('notrpc', plain.url);
    expect(reply.status).toBe(400);
    expect(reply.body.issues).toEqual([
      {
        path: '/mcp/url',
        message: expect.stringMatching(/^The server's answer is not MCP \(Streamable HTTP\): .+/),
      },
    ]);
    await expectNotStored('notrpc');
  });

  it('a server that hangs at initialize', async () => {
    const hanging = await startPlainServer(() => {});
    closers.push(hanging.close);
    const started = performance.now();
    const reply = await register('hangs', hanging.url);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual(refusedAtUrl('The MCP server did not answer in time (UPSTREAM_TIMEOUT_MS).'));
    // Refused at the time-out (8 s), not after the SDK's own minute.
    expect(performance.now() - started).toBeLessThan(30_000);
    await expectNotStored('hangs');
  }, 60_000);

  it('nothing listening: 502 upstream_unreachable', async () => {
    const port = await freePort();
    const reply = await register('gone', `http://127.0.0.1:${port}/mcp`);
    expect(reply.status).toBe(502);
    expect(reply.body).toEqual({
      ok: false,
      error: 'upstream_unreachable',
      message: 'The MCP server could not be reached: the connection was refused.',
    });
    await expectNotStored('gone');
  });

  it('a tools/list of 10,000 tools', async () => {
    const tools: TestTool[] = Array.from({ length: 10_000 }, (_, i) => ({ name: `t${i}` }));
    const many = await startMcpServer({ tools, pageSize: 1_000 });
    closers.push(many.close);
    const reply = await register('many', many.url);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual(refusedAtUrl('The MCP server lists more than 5000 tools.'));
    await expectNotStored('many');
  }, 60_000);

  it('a tools/list of 50 MB', async () => {
    // The page is written as it is made, the way a real server streams a large answer.
    const big = await startMcpServer({
      tools: [],
      intercept: (_req, res, body) => {
        const { method, id } = body as { method?: string; id?: unknown };
        if (method !== 'tools/list') return false;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(
          `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":[{"name":"big","inputSchema":{"type":"object"},"description":"`,
        );
        const chunk = 'x'.repeat(1024 * 1024);
        let sent = 0;
        const more = () => {
          while (sent < 50) {
            sent += 1;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end('"}]}}');
        };
        res.on('error', () => {});
        more();
        return true;
      },
    });
    closers.push(big.close);
    const reply = await register('big', big.url);
    expect(reply.status).toBe(502);
    expect(reply.body).toEqual({
      ok: false,
      error: 'upstream_too_large',
      message: `The MCP server answered more than ${LIMIT} bytes.`,
      limit: LIMIT,
    });
    await expectNotStored('big');
  }, 60_000);

  it('a tool whose schema is a $ref bomb refuses the registration; a failed replacement keeps the app', async () => {
    const defs: Record<string, unknown> = { d0: { type: 'string' } };
    for (let i = 1; i <= 24; i += 1) {
      defs[`d${i}`] = {
        type: 'object',
        properties: { a: { $ref: `#/$defs/d${i - 1}` }, b: { $ref: `#/$defs/d${i - 1}` } },
      };
    }
    const tools: TestTool[] = [{ name: 'fine' }];
    const hostile = await startMcpServer({ tools });
    closers.push(hostile.close);
    expect(
      await registerApp(server, 'hostile', {
        provider: 'example.bad',
        mcp: { url: hostile.url },
        auth: { type: 'none' },
      }),
    ).toEqual(['fine']);
    tools.push({
      name: 'bomb',
      inputSchema: { type: 'object', properties: { x: { $ref: '#/$defs/d24' } }, $defs: defs },
    });
    const reply = await register('hostile', hostile.url);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      ok: false,
      error: 'invalid_request',
      message: PROBLEMS,
      issues: [
        {
          path: '/mcp/tools/1/inputSchema',
          message: expect.stringMatching(/^This tool's inputSchema would expand to more than \d+ nodes/),
        },
      ],
    });
    const got = await call(server.url, 'GET', '/admin/apps/hostile', { key: server.adminKey });
    expect(got.body.tools).toEqual(['fine']);
  });

  it('tools whose schemas cannot be served are skipped; none servable refuses', async () => {
    const odd = await startMcpServer({
      tools: [
        {
          name: 'bad-pattern',
          inputSchema: { type: 'object', properties: { a: { type: 'string', pattern: '(' } } },
        },
        { name: 'deep', inputSchema: nested(200) },
        { name: 'elsewhere', inputSchema: { type: 'object', properties: { a: { $ref: 'other.json#/a' } } } },
      ],
    });
    closers.push(odd.close);
    const reply = await register('odd', odd.url);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual(
      refusedAtUrl(
        'No tool of the MCP server can be served: bad-pattern: Its inputSchema has a pattern that is not a regular expression: "(".',
      ),
    );
  });

  it('a call to a server that went away is 502 upstream_unreachable', async () => {
    const going = await startMcpServer({ tools: [{ name: 'ping', run: () => ({ content: [] }) }] });
    await registerApp(server, 'going', {
      provider: 'example.bad',
      mcp: { url: going.url },
      auth: { type: 'none' },
    });
    await going.close();
    const agent = await provisionAgent(server);
    const reply = await proxy(server, agent, { toolId: 'going:::ping', parameters: {} });
    expect(reply.status).toBe(502);
    expect(reply.body).toEqual({
      ok: false,
      error: 'upstream_unreachable',
      message: 'The MCP server could not be reached: the connection was refused.',
    });
  });
});

/** An object schema nested `depth` levels. */
function nested(depth: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < depth; i += 1) schema = { type: 'object', properties: { a: schema } };
  return schema;
}
