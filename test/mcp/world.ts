/**
 * What the MCP suites add to a world: the two official MCP clients — the v2 client pinned to
 * 2026-07-28 and the v1 client (2025-11-25 handshake) — connected to `/mcp` of the world's server
 * (over a socket: the SDK transports need a real URL) with an agent's headers, the simulated
 * user's consent, and raw JSON-RPC posts. A suite with OAuth apps starts the OAuth harness
 * (../oauth/harness.ts); one without starts the common world (../support/world.ts) and names the
 * agent.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Harness } from '../oauth/harness.ts';
import { type Agent, agentHeaders } from '../support/agent.ts';
import type { TestServer } from '../support/server.ts';

/** What the clients need: the server and an agent; the harness's provider for the default consent. */
export type McpWorld = { server: TestServer; agent: Agent } & Partial<Pick<Harness, 'provider' | 'callback'>>;

export interface McpClientOptions {
  agent?: Agent;
  userId?: string;
  /** Declare `elicitation.url` (default true). */
  urlElicitation?: boolean;
  /** Query of the /mcp URL, e.g. `?apps=demo`. */
  query?: string;
  /** The user's answer to a URL elicitation (default: consent at the provider, then accept). */
  onElicit?: (url: string) => Promise<'accept' | 'decline'>;
  /** Base URL of another server (the retry of a round on a second server). */
  baseUrl?: string;
}

export interface Elicited {
  url: string;
  message: string;
}

/**
 * The simulated user: opens the authorization URL, consents at the provider as `account`, and the
 * browser lands on toolgate's callback, which sends it to /oauth/complete?flow=<id>. Answers that
 * page, which tells the flow's outcome as the server recorded it.
 */
export async function consent(
  harness: Pick<Harness, 'provider' | 'callback' | 'server'>,
  authorizationUrl: string,
  account: string,
) {
  const back = await harness.provider.authorize(authorizationUrl, { account });
  const callback = await harness.callback(back);
  const location = callback.headers.get('location') ?? '';
  const page = await fetch(
    new URL(new URL(location).pathname + new URL(location).search, harness.server.url),
  );
  return {
    callback,
    location,
    page: { status: page.status, html: await page.text() },
  };
}

/** The v2 client, pinned to 2026-07-28. `elicited` collects every URL elicitation it answered. */
export async function connectV2(harness: McpWorld, options: McpClientOptions = {}) {
  const agent = options.agent ?? harness.agent;
  const elicited: Elicited[] = [];
  const client = new Client(
    { name: 'test-v2', version: '1.0.0' },
    {
      capabilities: options.urlElicitation === false ? {} : { elicitation: { url: {} } },
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    },
  );
  if (options.urlElicitation !== false) {
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as { url: string; message: string };
      elicited.push({ url: params.url, message: params.message });
      if (options.onElicit) return { action: await options.onElicit(params.url) };
      const { provider, callback } = harness;
      if (!provider || !callback) throw new Error('connectV2: consenting needs the OAuth harness');
      await consent({ provider, callback, server: harness.server }, params.url, options.userId ?? 'alice');
      return { action: 'accept' as const };
    });
  }
  const url = new URL(`/mcp${options.query ?? ''}`, options.baseUrl ?? harness.server.url);
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: agentHeaders(agent, options.userId) } }),
  );
  return { client, elicited, close: () => client.close() };
}

/** The v1 client (2025-11-25 handshake). */
export async function connectV1(harness: McpWorld, options: McpClientOptions = {}) {
  const agent = options.agent ?? harness.agent;
  const client = new V1Client(
    { name: 'test-v1', version: '1.0.0' },
    { capabilities: options.urlElicitation === false ? {} : { elicitation: { url: {} } } },
  );
  // Declared so the client accepts the capability; stateless serving never sends it a request.
  if (options.urlElicitation !== false)
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'cancel' }));
  const url = new URL(`/mcp${options.query ?? ''}`, options.baseUrl ?? harness.server.url);
  await client.connect(
    new V1Transport(url, { requestInit: { headers: agentHeaders(agent, options.userId) } }),
  );
  return { client, close: () => client.close() };
}

/** A raw JSON-RPC POST to /mcp (what a hand-rolled or hostile client sends). */
export async function rawMcp(
  baseUrl: string,
  body: string | Buffer,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const response = await fetch(new URL('/mcp', baseUrl), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body,
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: response.status, headers: response.headers, text, json };
}

/** A 2026-07-28 `tools/call` as the v2 client writes it, with optional requestState and inputResponses. */
export function modernCall(
  id: number,
  name: string,
  args: Record<string, unknown>,
  extra: { requestState?: string; inputResponses?: Record<string, unknown>; urlElicitation?: boolean } = {},
): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name,
      arguments: args,
      ...(extra.inputResponses ? { inputResponses: extra.inputResponses } : {}),
      ...(extra.requestState ? { requestState: extra.requestState } : {}),
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        'io.modelcontextprotocol/clientCapabilities':
          extra.urlElicitation === false ? {} : { elicitation: { url: {} } },
      },
    },
  });
}

export const MODERN_HEADERS = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' };
