/**
 * Remote MCP servers for the tests of apps from MCP servers, on loopback: the reference server
 * `@modelcontextprotocol/server-everything` (its Streamable HTTP mode, a 2025-era stateful server on
 * the v1 SDK), and small servers built with the official v2 server SDK (`createMcpHandler`, both
 * protocol eras) whose tools, pages and authorization a test chooses.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
import { freePort } from './ports.ts';

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

const EVERYTHING = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);

/** server-everything in Streamable HTTP mode on a free port (its URL ends in `/mcp`). */
export async function startEverything(): Promise<RunningServer> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    // No environment of ours: its get-env tool answers the process environment.
    const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
      env: { PORT: String(port), PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const started = await new Promise<boolean>((resolve, reject) => {
      let seen = '';
      child.stderr?.on('data', (chunk) => {
        seen += String(chunk);
        if (seen.includes('listening on port')) resolve(true);
        if (seen.includes('already in use')) resolve(false);
      });
      child.once('exit', () => resolve(false));
      child.once('error', reject);
    });
    if (started) return { url: `http://127.0.0.1:${port}/mcp`, close: () => stop(child) };
    await stop(child);
    if (attempt === 5) throw new Error('server-everything did not start');
  }
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** A tool of a test server: its definition, and what a call answers. */
export interface TestTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** The result of a call; `token` is the bearer token the call carried (undefined without one). */
  run?: (args: Record<string, unknown>, token: string | undefined) => unknown | Promise<unknown>;
}

export interface McpServerOptions {
  tools: TestTool[];
  /** Tools per `tools/list` page (default: all on one page). */
  pageSize?: number;
  /**
   * Decides each request before MCP sees it: answer it yourself (`true`: the response is written),
   * e.g. 401 with a challenge, or a body that is not MCP. Bodies come parsed (`undefined` if not JSON).
   */
  intercept?: (req: IncomingMessage, res: ServerResponse, body: unknown) => boolean | Promise<boolean>;
}

export interface TestMcpServer extends RunningServer {
  /** Every JSON-RPC method the server received, in order, with its bearer token. */
  received: Array<{ method: string; token: string | undefined }>;
  origin: string;
}

/** A server built with the official v2 server SDK, stateless, speaking both protocol eras. */
export async function startMcpServer(options: McpServerOptions): Promise<TestMcpServer> {
  const received: TestMcpServer['received'] = [];
  const pageSize = options.pageSize ?? Number.POSITIVE_INFINITY;
  const handler = createMcpHandler(
    async ({ authInfo }) => {
      const token = authInfo?.token || undefined;
      const server = new Server({ name: 'test-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler('tools/list', async (request) => {
        const offset = Number(request.params?.cursor ?? 0);
        const end = offset + pageSize;
        const tools = options.tools.slice(offset, end).map(({ run: _run, ...tool }) => ({
          inputSchema: { type: 'object' },
          ...tool,
        }));
        return {
          tools: tools as never,
          ...(end < options.tools.length ? { nextCursor: String(end) } : {}),
        };
      });
      server.setRequestHandler('tools/call', async (request) => {
        const tool = options.tools.find((candidate) => candidate.name === request.params.name);
        if (!tool?.run) return { content: [{ type: 'text', text: 'no such tool' }], isError: true };
        return (await tool.run(request.params.arguments ?? {}, token)) as never;
      });
      return server;
    },
    { legacy: 'stateless' },
  );
  const http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {}
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const method = (body as { method?: unknown } | undefined)?.method;
    if (typeof method === 'string') received.push({ method, token });
    if (options.intercept && (await options.intercept(req, res, body))) return;
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers.set(name, value);
    const request = new Request(new URL(req.url ?? '/', 'http://127.0.0.1'), {
      method: req.method ?? 'POST',
      headers,
      ...(req.method === 'POST' ? { body: text } : {}),
    });
    const response = await handler.fetch(request, {
      ...(body !== undefined ? { parsedBody: body } : {}),
      ...(token ? { authInfo: { token, clientId: 'test', scopes: [] } } : {}),
    });
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      out[name] = value;
    });
    res.writeHead(response.status, out);
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  const origin = await listen(http);
  return { url: `${origin}/mcp`, origin, received, close: () => closeServer(http) };
}

async function listen(http: HttpServer): Promise<string> {
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
}

function closeServer(http: HttpServer): Promise<void> {
  http.closeAllConnections();
  return new Promise((resolve) => http.close(() => resolve()));
}

/** A plain HTTP server answering every request with `answer` (a URL that is not an MCP server, one that hangs). */
export async function startPlainServer(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<RunningServer> {
  const http = createServer(answer);
  const origin = await listen(http);
  return { url: `${origin}/mcp`, close: () => closeServer(http) };
}
