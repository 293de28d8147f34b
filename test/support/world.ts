/**
 * The world every end-to-end test starts from: a real server on a fresh database of one backend,
 * the fixture upstream (upstream.ts) on loopback, optionally the oidc-provider fixture
 * (oauth-provider.ts) whose access tokens the upstream accepts, apps registered over the
 * upstream's document, and agents (a client with a key each) of the scopes a test names. The
 * folder worlds (the OAuth harness, the MCP and SDK worlds) build on it and add their own helpers.
 *
 *   const world = await startWorld(backend.name, {
 *     apps: { demo: { auth: { type: 'none' } } },
 *     agents: { all: ['tools:execute'], demoOnly: ['tools:execute:demo'] },
 *   });
 *   const reply = await world.proxy(world.agents.all, { toolId: 'demo:::getThing', parameters: {} });
 *
 * A second server of the same deployment (two servers on one PostgreSQL) is a world started with
 * `share: first`: its own server on the first one's database, the first one's upstream and provider.
 *
 * Requests go through the server's request listener without a socket (`inject`); a test that
 * puts the socket itself under test uses `call(world.server.url, …)`. The server listens all the
 * same: the provider's redirects and the MCP clients need its real URL.
 */
import { type Agent, asAgent, type ProvisionOptions, provisionAgent, registerApp } from './agent.ts';
import type { BackendName } from './db.ts';
import { inject } from './inject.ts';
import {
  type OAuthProviderFixture,
  type OAuthProviderOptions,
  startOAuthProvider,
} from './oauth-provider.ts';
import { type CallOptions, type Reply, type StartOptions, startServer, type TestServer } from './server.ts';
import { startUpstream, type Upstream, type UpstreamOptions } from './upstream.ts';

/** An app over the fixture upstream: its registration body, with the upstream's document by default. */
export interface WorldApp {
  /** Default `{ type: 'none' }`. */
  auth?: unknown;
  /**
   * An oauth2 app at the world's provider instead: the provider's `appAuth()` with these fields
   * over it (e.g. `{ scopes: [...] }`, `{}` for the provider's own).
   */
  oauth2?: Record<string, unknown>;
  /** Default `test.upstream`. */
  provider?: string;
  /** Default the upstream's OpenAPI 3.1 document (`upstream.openapi`). */
  openapi?: (upstream: Upstream) => unknown;
  /** Other fields of the registration (e.g. `baseUrl`). */
  extra?: Record<string, unknown>;
}

/** An agent's scopes, or its scopes and a redirect URI registered for its client. */
export type WorldAgent = string[] | { scopes: string[]; redirectUri?: string };

export interface WorldOptions<A extends string> {
  server?: StartOptions;
  upstream?: UpstreamOptions;
  /**
   * Start the oidc-provider fixture with these options. It starts after the server, so its
   * redirect URI defaults to the server's callback (`<PUBLIC_URL>/handleOAuthCallback`); the
   * upstream accepts its access tokens (`/me`).
   */
  provider?: Partial<OAuthProviderOptions>;
  /**
   * Another server on the database of `share`, with its upstream and provider (none is started;
   * `upstream` and `provider` are ignored). `close` closes this server only.
   */
  share?: Pick<World<string>, 'server' | 'upstream' | 'provider'>;
  /** Registered in this order (ids sort the catalog; the order only matters to a test of it). */
  apps?: Record<string, WorldApp>;
  /** Agents by name, each a client with one key of the given scopes. */
  agents?: Record<A, WorldAgent>;
}

export interface World<A extends string = never> {
  server: TestServer;
  upstream: Upstream;
  /** The oidc-provider fixture, when the options asked for one (or `share` had one). */
  provider?: OAuthProviderFixture;
  agents: Record<A, Agent>;
  /** PUT /admin/apps/<appId> with `app`'s registration (as the `apps` option registers). */
  registerApp(appId: string, app?: WorldApp): Promise<void>;
  /** A client of its own with one key of `scopes` (default every agent scope). */
  newAgent(scopes?: string[], options?: ProvisionOptions): Promise<Agent>;
  /** One request to the server (injected: no socket), as `call` answers it. */
  call(method: string, path: string, options?: CallOptions): Promise<Reply>;
  /** POST /proxyV2 as `agent`. */
  proxy(agent: Agent, body: unknown, headers?: Record<string, string>): Promise<Reply>;
  close(): Promise<void>;
}

export async function startWorld<A extends string = never>(
  backend: BackendName,
  options: WorldOptions<A> = {},
): Promise<World<A>> {
  const { share } = options;
  const [server, upstream] = await Promise.all([
    startServer(backend, {
      ...options.server,
      ...(share ? { databaseUrl: share.server.databaseUrl } : {}),
    }),
    share?.upstream ?? startUpstream(options.upstream),
  ]);
  let provider = share?.provider;
  // What this world started, closed in this order by `close` (and when starting fails half-way):
  // the server first, so that no request of it is left to reach the upstream or the provider.
  const owned: Array<() => Promise<void>> = [() => server.close()];
  if (!share) owned.push(() => upstream.close());
  const closeOwned = async () => {
    for (const close of owned) await close();
  };
  try {
    if (!share && options.provider) {
      const started = await startOAuthProvider({
        redirectUri: `${server.app.deps.config.publicUrl}/handleOAuthCallback`,
        ...options.provider,
      });
      owned.push(() => started.close());
      upstream.setTokenCheck((token) => started.isAccessTokenValid(token));
      provider = started;
    }
    const register = async (appId: string, app: WorldApp = {}) => {
      let auth = app.auth ?? { type: 'none' };
      if (app.oauth2) {
        if (!provider) throw new Error(`world: the oauth2 app ${appId} needs the provider option`);
        auth = { ...provider.appAuth(), ...app.oauth2 };
      }
      await registerApp(server, appId, {
        provider: app.provider ?? 'test.upstream',
        openapi: app.openapi ? app.openapi(upstream) : upstream.openapi,
        auth,
        ...app.extra,
      });
    };
    for (const [appId, app] of Object.entries(options.apps ?? {})) await register(appId, app as WorldApp);
    const named = Object.entries(options.agents ?? {}) as [A, WorldAgent][];
    const made = await Promise.all(
      named.map(([name, agent]) =>
        Array.isArray(agent)
          ? provisionAgent(server, agent, { name })
          : provisionAgent(server, agent.scopes, { name, redirectUri: agent.redirectUri }),
      ),
    );
    const agents = Object.fromEntries(named.map(([name], index) => [name, made[index]])) as Record<A, Agent>;
    const request = (method: string, path: string, callOptions?: CallOptions) =>
      inject(server, method, path, callOptions);
    return {
      server,
      upstream,
      provider,
      agents,
      registerApp: register,
      newAgent: (scopes, provisionOptions) => provisionAgent(server, scopes, provisionOptions),
      call: request,
      proxy: (agent, body, headers = {}) => request('POST', '/proxyV2', { ...asAgent(agent, headers), body }),
      close: closeOwned,
    };
  } catch (error) {
    await closeOwned();
    throw error;
  }
}
