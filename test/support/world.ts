/**
 * The world most end-to-end tests start from: a real server on a fresh database of one backend,
 * the fixture upstream (upstream.ts) on loopback, apps registered over the upstream's document,
 * and agents (a client with a key each) of the scopes a test names. The folder harnesses (the
 * OAuth harness, the MCP and SDK worlds) add their own parts around the same pieces.
 *
 *   const world = await startWorld(backend.name, {
 *     apps: { demo: { auth: { type: 'none' } } },
 *     agents: { all: ['tools:execute'], demoOnly: ['tools:execute:demo'] },
 *   });
 *   const reply = await world.proxy(world.agents.all, { toolId: 'demo:::getThing', parameters: {} });
 *
 * Requests go through the server's request listener without a socket (`inject`); a test that
 * puts the socket itself under test uses `call(world.server.url, …)`.
 */
import { type Agent, asAgent, provisionAgent, registerApp } from './agent.ts';
import type { BackendName } from './db.ts';
import { inject } from './inject.ts';
import { type CallOptions, type Reply, type StartOptions, startServer, type TestServer } from './server.ts';
import { startUpstream, type Upstream, type UpstreamOptions } from './upstream.ts';

/** An app over the fixture upstream: its registration body, with the upstream's document by default. */
export interface WorldApp {
  /** Default `{ type: 'none' }`. */
  auth?: unknown;
  /** Default `test.upstream`. */
  provider?: string;
  /** Default the upstream's OpenAPI 3.1 document (`upstream.openapi`). */
  openapi?: (upstream: Upstream) => unknown;
  /** Other fields of the registration (e.g. `baseUrl`). */
  extra?: Record<string, unknown>;
}

export interface WorldOptions<A extends string> {
  server?: StartOptions;
  upstream?: UpstreamOptions;
  /** Registered in this order (ids sort the catalog; the order only matters to a test of it). */
  apps?: Record<string, WorldApp>;
  /** Agents by name, each a client with one key of the given scopes. */
  agents?: Record<A, string[]>;
}

export interface World<A extends string = never> {
  server: TestServer;
  upstream: Upstream;
  agents: Record<A, Agent>;
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
  const [server, upstream] = await Promise.all([
    startServer(backend, options.server),
    startUpstream(options.upstream),
  ]);
  try {
    for (const [appId, app] of Object.entries(options.apps ?? {})) {
      await registerApp(server, appId, {
        provider: app.provider ?? 'test.upstream',
        openapi: app.openapi ? app.openapi(upstream) : upstream.openapi,
        auth: app.auth ?? { type: 'none' },
        ...app.extra,
      });
    }
    const named = Object.entries(options.agents ?? {}) as [A, string[]][];
    const made = await Promise.all(named.map(([name, scopes]) => provisionAgent(server, scopes, { name })));
    const agents = Object.fromEntries(named.map(([name], index) => [name, made[index]])) as Record<A, Agent>;
    const request = (method: string, path: string, callOptions?: CallOptions) =>
      inject(server, method, path, callOptions);
    return {
      server,
      upstream,
      agents,
      call: request,
      proxy: (agent, body, headers = {}) => request('POST', '/proxyV2', { ...asAgent(agent, headers), body }),
      close: async () => {
        await server.close();
        await upstream.close();
      },
    };
  } catch (error) {
    await server.close();
    await upstream.close();
    throw error;
  }
}
