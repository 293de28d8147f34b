/**
 * The end-user OAuth world of a test: a toolgate server (manual clock, PUBLIC_URL fixed so the
 * provider knows its redirect URI), the oidc-provider fixture, the upstream fixture accepting the
 * provider's access tokens on `/me`, a client with a key and a registered redirect URI, and the
 * oauth2 app `demo` over the upstream's OpenAPI document.
 */
import { manualClock } from '../../server/clock.ts';
import { type Agent, asAgent, provisionAgent, proxy, registerApp, userHeader } from '../support/agent.ts';
import type { BackendName } from '../support/db.ts';
import {
  type OAuthProviderFixture,
  type OAuthProviderOptions,
  startOAuthProvider,
} from '../support/oauth-provider.ts';
import { call, type Reply, startServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

export const PUBLIC_URL = 'http://toolgate.test';
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
  /** Another server on the same database (postgres), sharing the provider and upstream of `share`. */
  share?: Harness;
}

export async function startHarness(backend: BackendName, options: HarnessOptions = {}): Promise<Harness> {
  const clock = manualClock(Date.now());
  const provider =
    options.share?.provider ?? (await startOAuthProvider({ redirectUri: CALLBACK, ...options.provider }));
  const upstream = options.share?.upstream ?? (await startUpstream());
  upstream.setTokenCheck((token) => provider.isAccessTokenValid(token));
  const server = await startServer(backend, {
    clock,
    env: { PUBLIC_URL, ...options.env },
    ...(options.share ? { databaseUrl: options.share.server.databaseUrl } : {}),
  });

  const newAgent = (scopes?: string[]) => provisionAgent(server, scopes, { redirectUri: CLIENT_REDIRECT });
  const registerDemo = async (auth: Record<string, unknown> = {}, appId = APP_ID) => {
    await registerApp(server, appId, {
      provider: 'toolgate.test',
      openapi: upstream.openapi,
      auth: { ...provider.appAuth(), ...auth },
    });
  };
  const agent = options.share?.agent ?? (await newAgent());
  if (!options.share) await registerDemo();

  const harness: Harness = {
    server,
    provider,
    upstream,
    clock,
    agent,
    newAgent,
    registerApp: registerDemo,
    initiate: (userId, o = {}) =>
      call(server.url, 'POST', '/initiateOAuth', {
        ...asAgent(o.agent ?? agent),
        body: { appId: o.appId ?? APP_ID, userId, clientRedirectUri: o.redirectUri ?? CLIENT_REDIRECT },
      }),
    callback: (providerRedirect) =>
      call(server.url, 'GET', `/handleOAuthCallback${new URL(providerRedirect).search}`, {
        redirect: 'manual',
      }),
    connect: async (userId, o = {}) => {
      const started = await harness.initiate(userId, { agent: o.agent, appId: o.appId });
      if (started.status !== 200) throw new Error(`initiate: ${started.status} ${started.text}`);
      const back = await provider.authorize(started.body.authorizationUrl, { account: o.account ?? userId });
      return harness.callback(back);
    },
    proxy: (userId, tool = 'getMe', parameters = {}, o = {}) =>
      proxy(
        server,
        o.agent ?? agent,
        { toolId: `${o.appId ?? APP_ID}:::${tool}`, parameters },
        userHeader(userId),
      ),
    connections: (userId, o = {}) =>
      call(server.url, 'GET', `/connections${o.query ?? ''}`, asAgent(o.agent ?? agent, userHeader(userId))),
    disconnect: (userId, o = {}) =>
      call(
        server.url,
        'DELETE',
        `/connections/${o.appId ?? APP_ID}`,
        asAgent(o.agent ?? agent, userHeader(userId)),
      ),
    close: async () => {
      await server.close();
      if (!options.share) await Promise.all([provider.close(), upstream.close()]);
    },
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
