/**
 * The end-user OAuth world of a test, on the common one (../support/world.ts): a toolgate server
 * (manual clock, PUBLIC_URL fixed so the provider knows its redirect URI), the oidc-provider
 * fixture, the upstream fixture accepting the provider's access tokens on `/me`, a client with a
 * key and a registered redirect URI, and the oauth2 app `demo` over the upstream's OpenAPI
 * document. Requests go through the server's listener (`world.call`); the provider's consent and
 * its redirect back are real HTTP.
 */
import { manualClock } from '../../server/clock.ts';
import { AGENT_SCOPES, type Agent, asAgent, userHeader } from '../support/agent.ts';
import type { BackendName } from '../support/db.ts';
import type { OAuthProviderFixture, OAuthProviderOptions } from '../support/oauth-provider.ts';
import type { Reply, TestServer } from '../support/server.ts';
import type { Upstream } from '../support/upstream.ts';
import { startWorld, type World, type WorldApp } from '../support/world.ts';

export const PUBLIC_URL = 'http://toolgate.test';
/** The redirect URI the provider knows: the callback of a server of this PUBLIC_URL. */
export const CALLBACK = `${PUBLIC_URL}/handleOAuthCallback`;
/** A registered redirect URI with a query of its own, which the callback must keep as is. */
export const CLIENT_REDIRECT = 'https://agent.example/oauth/done?tenant=a%20b&x=1';
export const APP_ID = 'demo';

export interface Harness {
  server: TestServer;
  provider: OAuthProviderFixture;
  upstream: Upstream;
  clock: ReturnType<typeof manualClock>;
  agent: Agent;
  /** The common world underneath (its `call` dispatches without a socket). */
  world: World<'agent'>;
  /** A second client of its own (key of `scopes`, default every agent scope + the same redirect URI registered). */
  newAgent(scopes?: string[]): Promise<Agent>;
  /** PUT /admin/apps/demo with the provider's endpoints, changed by `auth`. */
  registerApp(auth?: Record<string, unknown>, appId?: string): Promise<void>;
  initiate(userId: string, options?: { agent?: Agent; appId?: string; redirectUri?: string }): Promise<Reply>;
  /** GET /handleOAuthCallback with the query the provider sent the browser back with. */
  callback(providerRedirect: URL | string): Promise<Reply>;
  /** initiate → provider consent → callback; answers the callback's reply (302 on success). */
  connect(userId: string, options?: { agent?: Agent; account?: string; appId?: string }): Promise<Reply>;
  proxy(
    userId: string | undefined,
    tool?: string,
    parameters?: Record<string, unknown>,
    options?: { agent?: Agent; appId?: string },
  ): Promise<Reply>;
  connections(userId: string, options?: { agent?: Agent; query?: string }): Promise<Reply>;
  disconnect(userId: string, options?: { agent?: Agent; appId?: string }): Promise<Reply>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  provider?: Partial<OAuthProviderOptions>;
  /** More apps, registered after `demo` (e.g. `none` apps over the same upstream). */
  apps?: Record<string, WorldApp>;
  /** Another server on the same database (postgres), sharing the provider, upstream and agent of `share`. */
  share?: Harness;
}

export async function startHarness(backend: BackendName, options: HarnessOptions = {}): Promise<Harness> {
  const clock = manualClock(Date.now());
  const { share } = options;
  // The database of `share` has `demo` and the agent already.
  const world = await startWorld<'agent'>(backend, {
    server: { clock, env: { PUBLIC_URL, ...options.env } },
    provider: { redirectUri: CALLBACK, ...options.provider },
    share: share?.world,
    apps: share ? options.apps : { [APP_ID]: { provider: 'toolgate.test', oauth2: {} }, ...options.apps },
    agents: share ? undefined : { agent: { scopes: AGENT_SCOPES, redirectUri: CLIENT_REDIRECT } },
  });
  const { server, upstream, provider } = world;
  if (!provider) throw new Error('harness: the world has no provider');
  const agent = share?.agent ?? world.agents.agent;

  const harness: Harness = {
    server,
    provider,
    upstream,
    clock,
    agent,
    world,
    newAgent: (scopes) => world.newAgent(scopes, { redirectUri: CLIENT_REDIRECT }),
    registerApp: (auth = {}, appId = APP_ID) =>
      world.registerApp(appId, { provider: 'toolgate.test', oauth2: auth }),
    initiate: (userId, o = {}) =>
      world.call('POST', '/initiateOAuth', {
        ...asAgent(o.agent ?? agent),
        body: { appId: o.appId ?? APP_ID, userId, clientRedirectUri: o.redirectUri ?? CLIENT_REDIRECT },
      }),
    callback: (providerRedirect) =>
      world.call('GET', `/handleOAuthCallback${new URL(providerRedirect).search}`),
    connect: async (userId, o = {}) => {
      const started = await harness.initiate(userId, { agent: o.agent, appId: o.appId });
      if (started.status !== 200) throw new Error(`initiate: ${started.status} ${started.text}`);
      const back = await provider.authorize(started.body.authorizationUrl, { account: o.account ?? userId });
      return harness.callback(back);
    },
    proxy: (userId, tool = 'getMe', parameters = {}, o = {}) =>
      world.proxy(
        o.agent ?? agent,
        { toolId: `${o.appId ?? APP_ID}:::${tool}`, parameters },
        userHeader(userId),
      ),
    connections: (userId, o = {}) =>
      world.call('GET', `/connections${o.query ?? ''}`, asAgent(o.agent ?? agent, userHeader(userId))),
    disconnect: (userId, o = {}) =>
      world.call(
        'DELETE',
        `/connections/${o.appId ?? APP_ID}`,
        asAgent(o.agent ?? agent, userHeader(userId)),
      ),
    close: () => world.close(),
  };
  return harness;
}

/** The query of a 302's Location, for assertions on status and reason. */
export function redirectQuery(reply: Reply): URLSearchParams {
  const location = reply.headers.get('location');
  if (!location) throw new Error(`no Location (status ${reply.status}: ${reply.text})`);
  return new URL(location).searchParams;
}

/** Every row of every table of toolgate's database, as one string (bytea as latin1, base64 and hex). */
export async function dumpDatabase(server: TestServer): Promise<string> {
  const prisma = server.app.deps.db.prisma;
  const tables = await prisma.$queryRawUnsafe<Array<{ table_name: string }>>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
  );
  const parts: string[] = [];
  for (const { table_name } of tables) {
    const rows = await prisma.$queryRawUnsafe<unknown[]>(
      `SELECT * FROM "${table_name.replaceAll('"', '""')}"`,
    );
    parts.push(
      `${table_name}: ${JSON.stringify(rows, (_key, value: unknown) => {
        if (value instanceof Uint8Array) {
          const bytes = Buffer.from(value);
          return [bytes.toString('latin1'), bytes.toString('base64'), bytes.toString('hex')].join(' ');
        }
        return typeof value === 'bigint' ? String(value) : value;
      })}`,
    );
  }
  return parts.join('\n');
}
