/**
 * The world of the SDK tests, around the common one (../support/world.ts): a real toolgate server (on a port chosen first, so that its
 * PUBLIC_URL is real and every OAuth hop is a real HTTP request), the upstream fixture, the
 * oidc-provider fixture, the agent's redirect receiver, a client with a key of every agent scope,
 * and two apps over the upstream's OpenAPI document: `open` (auth none) and `demo` (oauth2).
 */

import { Toolgate, type ToolgateOptions } from '../../sdk/src/index.ts';
import { AGENT_SCOPES, type Agent } from '../support/agent.ts';
import type { BackendName } from '../support/db.ts';
import type { OAuthProviderFixture } from '../support/oauth-provider.ts';
import { type RedirectReceiver, startRedirectReceiver } from '../support/redirect-receiver.ts';
import type { TestServer } from '../support/server.ts';
import { type ConsentOptions, consent, type Visit } from '../support/simulated-user.ts';
import { hits, type Upstream } from '../support/upstream.ts';
import { startWorld as startBaseWorld } from '../support/world.ts';

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
  // toolgate's public URL must be known before the provider registers its callback: the server
  // listens on a port chosen first, and its URL is its PUBLIC_URL (the common world starts the
  // provider after the server, with that callback).
  const [base, receiver] = await Promise.all([
    startBaseWorld(backend, {
      server: { ownPublicUrl: true },
      provider: {},
      apps: {
        open: { provider: 'toolgate.test' },
        demo: { provider: 'toolgate.test', oauth2: {} },
      },
    }),
    startRedirectReceiver(),
  ]);
  const { server, upstream, provider } = base;
  if (!provider) throw new Error('SDK world: the common world started no provider');
  const newAgent = (scopes: string[]) => base.newAgent(scopes, { redirectUri: receiver.url });
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
    meCalls: () => hits(upstream, '/me'),
    close: async () => {
      await base.close();
      await receiver.close();
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
