/**
 * `npm run demo`: the whole agent loop on this machine, with no network, no browser, no account.
 *
 * Starts an OAuth provider (oidc-provider), an upstream API that accepts its tokens, the agent's
 * redirect page, and toolgate itself (embedded PostgreSQL in a temporary folder, its own local key
 * and admin key); registers a client, a redirect URI, an API key and an OAuth app; then an agent
 * (through @toolgate/sdk) calls a tool for a user who has not connected yet, the user consents (HTTP
 * requests follow every redirect), the agent retries and succeeds; then the user revokes the grant
 * at the provider and the agent goes through reauthorization once more. Last, an MCP client (the
 * official SDK) calls the same tool for another user: toolgate asks for consent with a URL
 * elicitation inside the protocol, the user consents, and the client's retry succeeds.
 *
 * Exit status 0 only when every step worked. Everything is stopped at the end; an overall time
 * limit makes sure it never hangs.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import {
  type AuthProgressEvent,
  type ExecuteWithAuthOptions,
  failureMessage,
  Toolgate,
  ToolgateAdmin,
} from '../sdk/src/index.ts';
import { type App, createApp } from '../server/app.ts';
import { loadConfig } from '../server/config.ts';
import { createLogger } from '../server/logger.ts';
import type { OAuthProviderFixture } from '../test/support/oauth-provider.ts';
import { freePort } from '../test/support/ports.ts';
import { type RedirectReceiver, startRedirectReceiver } from '../test/support/redirect-receiver.ts';
import { consent } from '../test/support/simulated-user.ts';
import { startUpstream, type Upstream } from '../test/support/upstream.ts';
import { mcpRound } from './demo/mcp-round.ts';
import { createReporter, DemoFailure, type Reporter, shortUrl } from './demo/reporter.ts';

const TIME_LIMIT_MS = 120_000;
const STEPS = 9;
const APP_ID = 'demo';
const USER = 'ada';
/** A second user, who connects from inside MCP. */
const MCP_USER = 'grace';
const AGENT_SCOPES = ['tools:execute', 'oauth:initiate', 'connections:read', 'connections:write'];

interface World {
  dir?: string;
  provider?: OAuthProviderFixture;
  upstream?: Upstream;
  receiver?: RedirectReceiver;
  app?: App;
  logs: string[];
}

async function demo(report: Reporter, world: World): Promise<void> {
  report.step('Starting the pieces (all on 127.0.0.1)');
  world.dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-demo-'));
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const provider = await quietly(async () => {
    const { startOAuthProvider } = await import('../test/support/oauth-provider.ts');
    return startOAuthProvider({ redirectUri: `${publicUrl}/handleOAuthCallback` });
  });
  world.provider = provider;
  const upstream = await startUpstream();
  world.upstream = upstream;
  // The upstream answers the profile of the token's holder, as a real API does: each user's own.
  upstream.setTokenCheck(async (token) => {
    const account = await provider.accountOf(token);
    return account === undefined ? false : { account };
  });
  const receiver = await startRedirectReceiver();
  world.receiver = receiver;
  const adminKey = randomBytes(24).toString('hex');
  const loaded = loadConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: publicUrl,
    DATABASE_URL: `pglite:${path.join(world.dir, 'db')}`,
    TOOLGATE_ADMIN_KEY: adminKey,
    LOCAL_KEK: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
  });
  report.check(
    loaded.ok,
    `configuration refused: ${loaded.ok ? '' : `${loaded.error.variable} ${loaded.error.problem}`}`,
  );
  const sink = new Writable({
    write(chunk, _encoding, done) {
      world.logs.push(String(chunk));
      done();
    },
  });
  const app = await createApp(loaded.value, { logger: createLogger('warn', sink) });
  world.app = app;
  const baseUrl = await app.listen();
  report.detail(
    [
      `OAuth provider (oidc-provider)   ${provider.issuer}   (a local stand-in for e.g. Google)`,
      `upstream API (OpenAPI 3.1)       ${upstream.url}`,
      `the agent's redirect page        ${receiver.url}`,
      `toolgate                         ${baseUrl}`,
      `  database: embedded PostgreSQL (PGlite) in ${path.join(world.dir, 'db')}`,
      '  secrets at rest: envelope-encrypted with a local key made for this run',
    ].join('\n'),
  );

  report.step('The operator registers a client, its redirect URI, an API key and an OAuth app');
  const admin = new ToolgateAdmin({ baseUrl, adminKey });
  const client = await admin.createClient('demo agent');
  report.check(client.ok, `create client: ${client.ok ? '' : failureMessage(client)}`);
  const uri = await admin.addRedirectUri(client.clientId, receiver.url);
  report.check(uri.ok, `add redirect URI: ${uri.ok ? '' : failureMessage(uri)}`);
  const key = await admin.createApiKey(client.clientId, { name: 'demo', scopes: AGENT_SCOPES });
  report.check(key.ok, `create API key: ${key.ok ? '' : failureMessage(key)}`);
  const put = await admin.putApp(APP_ID, {
    provider: 'toolgate.demo',
    openapi: upstream.openapi,
    auth: provider.appAuth(),
  });
  report.check(put.ok, `register app: ${put.ok ? '' : failureMessage(put)}`);
  report.detail(
    [
      `client ${client.clientId}, redirect URI ${receiver.url}`,
      `API key ${key.keyId} with scopes ${key.scopes.join(', ')}`,
      `app "${APP_ID}" (oauth2 at the provider, scope profile:read): ${put.tools.length} tools from its OpenAPI document`,
    ].join('\n'),
  );

  report.step('The agent reads the catalog');
  const toolgate = new Toolgate({ baseUrl, apiKey: key.apiKey, clientId: client.clientId });
  const tools = await toolgate.listTools({ appId: APP_ID });
  report.check(tools.ok, `list tools: ${tools.ok ? '' : failureMessage(tools)}`);
  const getMe = tools.tools.find((t) => t.toolId === `${APP_ID}:::getMe`);
  report.check(getMe?.requiresUserAuth, 'the catalog should list demo:::getMe as a tool that needs the user');
  report.detail(
    `${tools.tools.length} tools, e.g. ${getMe.toolId} — "${getMe.description || 'The signed-in user'}"`,
  );
  report.detail(`needs the user's authorization: yes (scopes ${getMe.scopes.join(' ')})`);

  report.step(`The agent calls ${getMe.toolId} for user "${USER}", who has not connected yet`);
  const before = upstream.requests.filter((r) => r.path === '/me').length;
  const first = await runWithAuth(report, toolgate, provider, receiver, getMe.toolId);
  report.check(
    first.events.some((e) => e.type === 'auth_required' && !e.reauth),
    'expected auth_required first',
  );
  const calls = upstream.requests.filter((r) => r.path === '/me').length - before;
  report.check(calls === 1, `the upstream should have run exactly once, ran ${calls} times`);
  report.ok('the upstream API ran exactly once, for the retry');

  report.step('The user revokes the access at the provider (as in an account\'s "connected apps" page)');
  await provider.revokeGrants(USER);
  const listed = await toolgate.listConnections({ userId: USER, appId: APP_ID });
  report.check(listed.ok, `list connections: ${listed.ok ? '' : failureMessage(listed)}`);
  report.detail(
    `toolgate does not know yet: its connection still says "${listed.connections[0]?.status}" until a call fails`,
  );

  report.step(`The agent calls ${getMe.toolId} again: the stored grant no longer works`);
  const second = await runWithAuth(report, toolgate, provider, receiver, getMe.toolId);
  report.check(
    second.events.some((e) => e.type === 'auth_required' && e.reauth),
    'expected auth_required with reauth_required: true',
  );

  report.step("The agent lists the user's connections");
  const after = await toolgate.listConnections({ userId: USER });
  report.check(after.ok, `list connections: ${after.ok ? '' : failureMessage(after)}`);
  for (const c of after.connections) {
    report.detail(
      `${c.appId}: ${c.status}, scopes ${c.scopes.join(' ')}, updated ${c.updatedAt} (no token is ever shown)`,
    );
  }
  report.check(
    after.connections.some((c) => c.appId === APP_ID && c.status === 'active'),
    'expected an active connection',
  );

  report.step(`An MCP client (official SDK, 2026-07-28) uses the same tools for user "${MCP_USER}"`);
  await mcpRound(report, {
    baseUrl,
    apiKey: key.apiKey,
    clientId: client.clientId,
    userId: MCP_USER,
    appId: APP_ID,
    provider,
    upstream,
  });
}

/**
 * Runs `fn` without oidc-provider's start-up warnings (Node 20 "unsupported", development keys and
 * in-memory storage): true, and expected of a local stand-in, but noise for a newcomer.
 */
async function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith('oidc-provider WARNING')) return;
    warn(...args);
  };
  try {
    return await fn();
  } finally {
    console.warn = warn;
  }
}

/** executeWithAuth with a simulated user, printing each step of the loop. */
async function runWithAuth(
  report: Reporter,
  toolgate: Toolgate,
  provider: OAuthProviderFixture,
  receiver: RedirectReceiver,
  toolId: string,
): Promise<{ events: AuthProgressEvent[] }> {
  const events: AuthProgressEvent[] = [];
  const idempotencyKey = crypto.randomUUID();
  let polled = false;
  report.detail(
    `→ POST /proxyV2 ${toolId} (X-Service-User-Id: ${USER}, X-Service-Idempotency-Key: ${idempotencyKey})`,
  );
  const options: ExecuteWithAuthOptions = {
    userId: USER,
    idempotencyKey,
    clientRedirectUri: receiver.url,
    timeoutMs: 30_000,
    pollIntervalMs: 100,
    maxPollIntervalMs: 500,
    onProgress: (event) => {
      events.push(event);
      if (event.type === 'auth_required') {
        report.detail(
          event.reauth
            ? `← 401 auth_required, reauth_required: true — the grant of app "${event.appId}" cannot be refreshed`
            : `← 401 auth_required — the user has not authorized app "${event.appId}"`,
        );
      } else if (event.type === 'authorization_url') {
        report.detail(`→ POST /initiateOAuth → an authorization URL, valid until ${event.expiresAt}`);
      } else if (event.type === 'waiting' && !polled) {
        polled = true;
        report.detail(
          `… the SDK polls GET /connections?appId=${event.appId} until the app is active (now: ${event.status})`,
        );
      } else if (event.type === 'connected') {
        report.detail(
          `✓ GET /connections: ${event.appId} is ${event.connection.status} (updated ${event.connection.updatedAt})`,
        );
      } else if (event.type === 'retrying') {
        report.detail(`→ POST /proxyV2 again, with the same idempotency key ${event.idempotencyKey}`);
      }
    },
    onAuthorizationUrl: async (url) => {
      report.detail(`the agent shows the user a link: ${shortUrl(url)}`);
      const visit = await consent(provider, url, { account: USER });
      report.detail(
        [
          `  the user opens it, signs in as "${USER}" at the provider and consents`,
          `  the provider sends the browser to toolgate: ${shortUrl(visit.callbackUrl)}`,
          '  toolgate checks the state and PKCE, exchanges the code, stores the tokens encrypted,',
          `  and sends the browser to the agent's page: ${shortUrl(visit.redirectedTo)}`,
        ].join('\n'),
      );
      const arrival = await receiver.next();
      report.check(
        arrival.get('status') === 'success',
        `the agent's page got status=${arrival.get('status')}`,
      );
    },
  };
  const result = await toolgate.executeWithAuth<unknown>(toolId, {}, options);
  if (!result.ok) {
    throw new DemoFailure(`${toolId} failed: ${result.error}: ${failureMessage(result)}`);
  }
  report.check(
    events.some((e) => e.type === 'retrying'),
    'expected the SDK to retry after authorization',
  );
  report.ok(
    `← 200 ${JSON.stringify(result.data)} in ${result.meta.duration_ms} ms (provider ${result.meta.provider})`,
  );
  return { events };
}

async function stop(world: World): Promise<void> {
  const closing: Array<Promise<unknown>> = [];
  if (world.app) closing.push(world.app.close());
  if (world.provider) closing.push(world.provider.close());
  if (world.upstream) closing.push(world.upstream.close());
  if (world.receiver) closing.push(world.receiver.close());
  await Promise.allSettled(closing);
  if (world.dir) await rm(world.dir, { recursive: true, force: true });
}

async function main(): Promise<number> {
  const report = createReporter(STEPS);
  const world: World = { logs: [] };
  process.stdout.write(
    'toolgate demo — an AI agent calls a tool on behalf of a user, end to end, on this machine\n',
  );
  const limit = setTimeout(() => {
    process.stderr.write(`\ndemo: FAILED — still running after ${TIME_LIMIT_MS / 1000} s; stopping.\n`);
    void stop(world).finally(() => process.exit(1));
    setTimeout(() => process.exit(1), 5_000).unref();
  }, TIME_LIMIT_MS);
  let interrupted = false;
  process.once('SIGINT', () => {
    interrupted = true;
    process.stderr.write('\ndemo: interrupted; stopping everything.\n');
    void stop(world).finally(() => process.exit(130));
  });
  let code = 0;
  try {
    await demo(report, world);
  } catch (error) {
    // After Ctrl-C the pieces are being stopped under the running steps: their failures are expected.
    if (interrupted) return new Promise<number>(() => {});
    code = 1;
    const message = error instanceof DemoFailure ? error.message : ((error as Error)?.stack ?? String(error));
    process.stderr.write(`\ndemo: FAILED at step ${report.steps}: ${message}\n`);
    if (world.logs.length) process.stderr.write(`server log:\n${world.logs.join('')}`);
  }
  report.step('Stopping everything');
  await stop(world);
  clearTimeout(limit);
  report.detail(
    'toolgate, the provider, the upstream and the redirect page are stopped; the temporary folder is removed',
  );
  process.stdout.write(code === 0 ? '\nEvery step worked.\n' : '\nThe demo did not complete.\n');
  return code;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`demo: unexpected failure: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
