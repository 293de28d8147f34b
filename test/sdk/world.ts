/**
 * The world of the SDK tests: a real toolgate server (on a port chosen first, so that its
 * PUBLIC_URL is real and every OAuth hop is a real HTTP request), the upstream fixture, the
 * oidc-provider fixture, the agent's redirect receiver, a client with a key of every agent scope,
 * and two apps over the upstream's OpenAPI document: `open` (auth none) and `demo` (oauth2).
 */

import { freePort } from '../../scripts/demo/free-port.ts';
import { type RedirectReceiver, startRedirectReceiver } from '../../scripts/demo/redirect-receiver.ts';
import { type ConsentOptions, consent, type Visit } from '../../scripts/demo/simulated-user.ts';
import { Toolgate, type ToolgateOptions } from '../../sdk/src/index.ts';
import { provisionAgent } from '../support/agent.ts';
import type { BackendName } from '../support/db.ts';
import { type OAuthProviderFixture, startOAuthProvider } from '../support/oauth-provider.ts';
import { call, startServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

export const AGENT_SCOPES = ['tools:execute', 'oauth:initiate', 'connections:read', 'connections:write'];

export { freePort };

export interface Agent {
  clientId: string;
  keyId: string;
  apiKey: string;
}

export interface World {
  server: TestServer;
  upstream: Upstream;
  provider: OAuthProviderFixture;
  receiver: RedirectReceiver;
  agent: Agent;
  /** A Toolgate client of `agent` (or of other credentials). */
  toolgate(options?: Partial<ToolgateOptions>): Toolgate;
  /** Another client with a key of the given scopes and the receiver's URI registered. */
  newAgent(scopes: string[]): Promise<Agent>;
  /** The user consents at the provider and follows every redirect back to the receiver. */
  consent(authorizationUrl: string, options?: ConsentOptions): Promise<Visit>;
  /** Upstream requests to `/me` (the oauth2 tool `demo:::getMe`). */
  meCalls(): number;
  close(): Promise<void>;
}

export async function startWorld(backend: BackendName): Promise<World> {
  // toolgate's public URL must be known before it starts and before the provider registers its
  // callback: take a free port, and take another when something else bound it in the meantime.
  let server: TestServer | undefined;
  let publicUrl = '';
  for (let attempt = 1; !server; attempt += 1) {
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    try {
      server = await startServer(backend, { env: { PORT: String(port), PUBLIC_URL: publicUrl } });
    } catch (error) {
      if ((error as { code?: string }).code !== 'EADDRINUSE' || attempt === 5) throw error;
    }
  }
  const provider = await startOAuthProvider({ redirectUri: `${publicUrl}/handleOAuthCallback` });
  const upstream = await startUpstream();
  upstream.setTokenCheck((token) => provider.isAccessTokenValid(token));
  const receiver = await startRedirectReceiver();

  const admin = async (method: string, path: string, body?: unknown) => {
    const reply = await call(server.url, method, path, { key: server.adminKey, body });
    if (reply.status !== 200) throw new Error(`${method} ${path}: ${reply.status} ${reply.text}`);
    return reply.body;
  };
  await admin('PUT', '/admin/apps/open', {
    provider: 'toolgate.test',
    openapi: upstream.openapi,
    auth: { type: 'none' },
  });
  await admin('PUT', '/admin/apps/demo', {
    provider: 'toolgate.test',
    openapi: upstream.openapi,
    auth: provider.appAuth(),
  });
  const newAgent = async (scopes: string[]): Promise<Agent> => {
    const agent = await provisionAgent(server, scopes);
    await admin('POST', `/admin/clients/${agent.clientId}/redirect-uris`, { uri: receiver.url });
    return agent;
  };
  const agent = await newAgent(AGENT_SCOPES);

  return {
    server,
    upstream,
    provider,
    receiver,
    agent,
    toolgate: (options = {}) =>
      new Toolgate({ baseUrl: server.url, apiKey: agent.apiKey, clientId: agent.clientId, ...options }),
    newAgent,
    consent: (authorizationUrl, options) => consent(provider, authorizationUrl, options),
    meCalls: () => upstream.requests.filter((r) => r.path === '/me').length,
    close: async () => {
      await server.close();
      await Promise.all([provider.close(), upstream.close(), receiver.close()]);
    },
  };
}

/** A fetch that records every request the SDK sends (method, path, headers, body). */
export function recordingFetch(inner: typeof fetch = fetch): {
  fetch: typeof fetch;
  sent: Array<{ method: string; path: string; url: URL; headers: Headers; body: string }>;
} {
  const sent: Array<{ method: string; path: string; url: URL; headers: Headers; body: string }> = [];
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const body = request.body ? await request.clone().text() : '';
    sent.push({
      method: request.method,
      path: new URL(request.url).pathname,
      url: new URL(request.url),
      headers: request.headers,
      body,
    });
    return inner(request);
  };
  return { fetch: recording, sent };
}
