/**
 * An agent of the end-to-end tests and what it does against a real server: a client with an API
 * key made through the admin REST routes, the apps registered for it, and its calls of /proxyV2.
 */
import { HEADER } from '../../shared/headers.ts';
import { type CallOptions, call, type Reply, type TestServer } from './server.ts';

/** A client and one API key of it. */
export interface Agent {
  clientId: string;
  keyId: string;
  apiKey: string;
}

/** Every scope of an agent of the OAuth flows: run tools, start OAuth, read and remove connections. */
export const AGENT_SCOPES = ['tools:execute', 'oauth:initiate', 'connections:read', 'connections:write'];

export interface ProvisionOptions {
  /** The client's name (default `agent`). */
  name?: string;
  /** A redirect URI registered for the client, where initiateOAuth may send the user back. */
  redirectUri?: string;
}

/** Sets up a client with an API key of the given scopes through the admin REST routes. */
export async function provisionAgent(
  server: TestServer,
  scopes: string[] = AGENT_SCOPES,
  options: ProvisionOptions = {},
): Promise<Agent> {
  const admin = async (path: string, body: unknown, what: string) => {
    const reply = await call(server.url, 'POST', path, { key: server.adminKey, body });
    if (reply.status !== 200) throw new Error(`${what}: ${reply.status} ${reply.text}`);
    return reply.body;
  };
  const { clientId } = await admin('/admin/clients', { name: options.name ?? 'agent' }, 'create client');
  const { keyId, apiKey } = await admin(`/admin/clients/${clientId}/api-keys`, { scopes }, 'create key');
  if (options.redirectUri !== undefined)
    await admin(`/admin/clients/${clientId}/redirect-uris`, { uri: options.redirectUri }, 'redirect URI');
  return { clientId, keyId, apiKey };
}

/** The options of `call` as `agent` (its key and client id), with `headers` besides. */
export function asAgent(agent: Agent, headers: Record<string, string> = {}): CallOptions {
  return { key: agent.apiKey, clientId: agent.clientId, headers };
}

/** The header naming the end user `userId` (none when undefined). */
export function userHeader(userId: string | undefined): Record<string, string> {
  return userId === undefined ? {} : { [HEADER.userId]: userId };
}

/** The headers an agent sends on every request (MCP clients, raw fetches), for `userId` when given. */
export function agentHeaders(agent: Agent, userId?: string): Record<string, string> {
  return {
    [HEADER.authorization]: `Bearer ${agent.apiKey}`,
    [HEADER.clientId]: agent.clientId,
    ...userHeader(userId),
  };
}

/** PUT /admin/apps/{appId} with the admin key; throws unless it answers 200. Answers the app's tools. */
export async function registerApp(
  server: TestServer,
  appId: string,
  registration: unknown,
): Promise<string[]> {
  const reply = await call(server.url, 'PUT', `/admin/apps/${appId}`, {
    key: server.adminKey,
    body: registration,
  });
  if (reply.status !== 200) throw new Error(`register ${appId}: ${reply.status} ${reply.text}`);
  return reply.body.tools;
}

/** POST /proxyV2 as `agent`. */
export function proxy(
  server: TestServer,
  agent: Agent,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return call(server.url, 'POST', '/proxyV2', { ...asAgent(agent, headers), body });
}
