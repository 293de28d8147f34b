/** Shortcuts for the end-to-end tests of apps, /tools and /proxyV2 (real server, real upstream). */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, type Reply, type TestServer } from '../support/server.ts';

export interface Agent {
  clientId: string;
  keyId: string;
  apiKey: string;
}

/** PUT /admin/apps/{appId} with the admin key; throws unless it answers 200. */
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
  return call(server.url, 'POST', '/proxyV2', {
    key: agent.apiKey,
    clientId: agent.clientId,
    body,
    headers,
  });
}

/** A port on 127.0.0.1 that nothing listens on (bound once, then released). */
export async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** A path segment as the contract's percent-encoding makes it: all but RFC 3986 unreserved characters. */
export function strictlyEncoded(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** An oauth2 registration of the fixture upstream (the provider endpoints are never contacted by these tests). */
export function oauth2Auth(scopes: string[] = ['profile:read', 'notes:write']) {
  return {
    type: 'oauth2',
    authorizationUrl: 'https://auth.example/authorize',
    tokenUrl: 'https://auth.example/token',
    clientId: 'toolgate-client',
    clientSecret: 'oauth-client-secret-do-not-leak',
    scopes,
  };
}
