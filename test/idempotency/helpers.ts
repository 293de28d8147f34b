/** Fixtures of the idempotency tests (the agent, apps and calls: ../support/agent.ts). */
import { HEADER } from '../../shared/headers.ts';
import { registerApp } from '../support/agent.ts';
import { freePort } from '../support/ports.ts';
import type { Reply, TestServer } from '../support/server.ts';
import type { Upstream } from '../support/upstream.ts';

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

/** The headers of a call under the idempotency key `key`, with `headers` besides. */
export function keyed(key: string, headers: Record<string, string> = {}): Record<string, string> {
  return { [HEADER.idempotencyKey]: key, ...headers };
}

/** The replay mark of an answer: `'true'` on a replay, null on a fresh run. */
export function replayed(reply: Reply): string | null {
  return reply.headers.get(HEADER.idempotentReplayed);
}
