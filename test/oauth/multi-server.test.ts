import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../server/config.ts';
import { startAuthorization } from '../../server/oauth/initiate.ts';
import { isOAuthApp } from '../../server/oauth/provider.ts';
import { hasPostgres } from '../support/db.ts';
import { call } from '../support/server.ts';
import { type Harness, redirectQuery, startHarness } from './harness.ts';

const INTO_REFRESH_WINDOW = 300_000 - LIMITS.refreshSkewMs;
const TIMEOUT_MS = 1_500;

// Two servers in one process share nothing but the database: what must hold across processes
// (one refresh per grant, single-use state) is held by PostgreSQL alone.
describe.runIf(hasPostgres())('end-user OAuth across two servers on one PostgreSQL', () => {
  let a: Harness;
  let b: Harness;
  beforeAll(async () => {
    a = await startHarness('postgres', { env: { UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS) } });
    b = await startHarness('postgres', { share: a, env: { UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS) } });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('uses a grant made through one server on the other', async () => {
    expect(redirectQuery(await a.connect('both')).get('status')).toBe('success');
    expect((await b.proxy('both')).status).toBe(200);
  });

  it('lets one of concurrent callbacks spread over both servers exchange the code', async () => {
    const started = await a.initiate('split-callback');
    const back = await a.provider.authorize(started.body.authorizationUrl, { account: 'split-callback' });
    const exchanges = a.provider.counts.authorization_code;
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).callback(back)),
    );
    expect(replies.filter((reply) => redirectQuery(reply).get('status') === 'success')).toHaveLength(1);
    expect(a.provider.counts.authorization_code).toBe(exchanges + 1);
  });

  it('keeps 20 live states per (client, user, app) when starts race over both servers (issue 23)', async () => {
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).initiate('racing-starts')),
    );
    expect(replies.map((reply) => reply.status)).toEqual(Array(30).fill(200));
    const live = await a.server.app.deps.db.prisma.oAuthState.count({
      where: { clientId: a.agent.clientId, userId: 'racing-starts', appId: 'demo', usedAt: null },
    });
    expect(live).toBe(20);
  });

  it('shows the outcome of a flow from MCP on either server (issue 23)', async () => {
    const app = await a.server.app.deps.apps.get('demo');
    if (!app || !isOAuthApp(app)) throw new Error('demo is not an oauth2 app');
    const flow = await startAuthorization(a.server.app.deps, a.agent.clientId, 'paged-twice', app, null);
    const back = await a.provider.authorize(flow.authorizationUrl, { account: 'paged-twice' });
    const location = (await a.callback(back)).headers.get('location') as string;
    const page = await call(b.server.url, 'GET', `/oauth/complete${new URL(location).search}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<strong>demo</strong> is now connected');
  });

  it('makes 20 concurrent calls over both servers on an expiring token cause exactly one refresh', async () => {
    expect(redirectQuery(await a.connect('crowd')).get('status')).toBe('success');
    a.clock.advance(INTO_REFRESH_WINDOW);
    b.clock.advance(INTO_REFRESH_WINDOW);
    const refreshes = a.provider.counts.refresh_token;
    // Slow enough that both servers are refreshing (or waiting for the lock) at once.
    a.provider.delayTokenEndpoint(300);
    try {
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).proxy('crowd')),
      );
      expect(replies.map((reply) => reply.status)).toEqual(Array(20).fill(200));
    } finally {
      a.provider.delayTokenEndpoint(0);
    }
    expect(a.provider.counts.refresh_token).toBe(refreshes + 1);
    const tokens = new Set(a.upstream.requests.slice(-20).map((request) => request.headers.authorization));
    expect(tokens.size).toBe(1);
  });

  it('lets a call on the other server wait for a refresh that outlived its call, and use its answer (issue 23)', async () => {
    expect(redirectQuery(await a.connect('late-other')).get('status')).toBe('success');
    a.clock.advance(INTO_REFRESH_WINDOW);
    b.clock.advance(INTO_REFRESH_WINDOW);
    const refreshes = a.provider.counts.refresh_token;
    // The provider rotates at once and answers after A's call has given up.
    a.provider.delayTokenAnswer(TIMEOUT_MS + 700);
    try {
      expect((await a.proxy('late-other')).status).toBe(504);
      // A's refresh still holds the grant's row lock: B waits for it, then uses what it stored
      // instead of spending the refresh token the provider has already rotated away.
      const other = await b.proxy('late-other');
      expect(other.status).toBe(200);
      expect(other.body.data).toEqual({ id: 'user-1', name: 'Ada' });
    } finally {
      a.provider.delayTokenAnswer(0);
    }
    expect(a.provider.counts.refresh_token).toBe(refreshes + 1);
    expect((await b.connections('late-other')).body.connections[0].status).toBe('active');
  });
});
