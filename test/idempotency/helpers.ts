/** Shortcuts for the idempotency tests: a real server, the fixture upstream, agents and calls. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { provisionAgent } from '../support/agent.ts';
import { call, type Reply, type TestServer } from '../support/server.ts';
import type { Upstream } from '../support/upstream.ts';

export interface Agent {
  clientId: string;
  keyId: string;
  apiKey: string;
}

export const KEY_HEADER = 'x-service-idempotency-key';
export const REPLAYED_HEADER = 'x-service-idempotent-replayed';

/** PUT /admin/apps/{appId}; throws unless it answers 200. */
export async function registerApp(server: TestServer, appId: string, registration: unknown): Promise<void> {
  const reply = await call(server.url, 'PUT', `/admin/apps/${appId}`, {
    key: server.adminKey,
    body: registration,
  });
  if (reply.status !== 200) throw new Error(`register ${appId}: ${reply.status} ${reply.text}`);
}

/**
 * The fixture upstream as two apps: `demo` (no auth) and `oauthy` (oauth2, its provider on a closed
 * port: nothing there is ever reached, a call without a grant stops at 401 auth_required).
 */
export async function registerApps(server: TestServer, upstream: Upstream): Promise<void> {
  await registerApp(server, 'demo', {
    provider: 'test.upstream',
    openapi: upstream.openapi,
    auth: { type: 'none' },
  });
  const port = await freePort();
  await registerApp(server, 'oauthy', {
    provider: 'test.upstream',
    openapi: upstream.openapi,
    auth: {
      type: 'oauth2',
      authorizationUrl: `http://127.0.0.1:${port}/authorize`,
      tokenUrl: `http://127.0.0.1:${port}/token`,
      clientId: 'toolgate-client',
      clientSecret: 'oauth-client-secret',
      scopes: ['profile:read'],
    },
  });
}

export function newAgent(server: TestServer, name = 'agent'): Promise<Agent> {
  return provisionAgent(server, ['tools:execute'], { name });
}

/** POST /proxyV2 as `agent`, with an idempotency key unless `key` is undefined. */
export function proxy(
  server: TestServer,
  agent: Agent,
  key: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return call(server.url, 'POST', '/proxyV2', {
    key: agent.apiKey,
    clientId: agent.clientId,
    body,
    headers: key === undefined ? headers : { [KEY_HEADER]: key, ...headers },
  });
}

/** How many requests the upstream received on `path` (with its query string, when given). */
export function hits(upstream: Upstream, path: string, query?: string): number {
  return upstream.requests.filter((r) => r.path === path && (query === undefined || r.query === query))
    .length;
}

/** A port on 127.0.0.1 that nothing listens on (bound once, then released). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
