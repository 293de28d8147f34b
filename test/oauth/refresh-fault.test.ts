// Issue 11 §2: the provider's answer to a refresh (a rotated refresh token) must be stored even
// when the database connection holding the grant's row lock dies after the provider answered.
// Real PostgreSQL: the lock's backend is killed with pg_terminate_backend mid-refresh.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../server/config.ts';
import { hasPostgres } from '../support/db.ts';
import { type Harness, redirectQuery, startHarness } from './harness.ts';

const INTO_REFRESH_WINDOW = 300_000 - LIMITS.refreshSkewMs;

describe.runIf(hasPostgres())('refresh when the lock connection dies [postgres]', () => {
  let h: Harness;
  let admin: pg.Client;
  beforeAll(async () => {
    h = await startHarness('postgres', { env: { UPSTREAM_TIMEOUT_MS: '5000' } });
    admin = new pg.Client({ connectionString: h.server.databaseUrl });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await h?.close();
  });

  /** The backend of this database sitting in an open transaction (the refresh holding the row lock). */
  async function lockHolder(): Promise<number> {
    for (;;) {
      const { rows } = await admin.query<{ pid: number }>(
        `SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE a.datname = current_database() AND l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock'
            AND a.state = 'idle in transaction' AND l.pid <> pg_backend_pid()`,
      );
      if (rows[0]) return rows[0].pid;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  it('keeps the rotated refresh token: the call succeeds or answers 502, and the provider sees one refresh', async () => {
    const done = await h.connect('fault');
    expect(redirectQuery(done).get('status')).toBe('success');
    h.clock.advance(INTO_REFRESH_WINDOW);
    const refreshes = h.provider.counts.refresh_token;

    // Keep the provider's answer pending while the lock's backend is killed.
    h.provider.delayTokenEndpoint(500);
    let reply: Awaited<ReturnType<Harness['proxy']>>;
    try {
      const pending = h.proxy('fault');
      const pid = await lockHolder();
      const { rows } = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]);
      expect(rows[0]?.ok).toBe(true);
      reply = await pending;
    } finally {
      h.provider.delayTokenEndpoint(0);
    }
    expect([200, 502]).toContain(reply.status);
    if (reply.status === 200) expect(reply.body.data).toEqual({ id: 'user-1', name: 'Ada' });
    expect(h.provider.counts.refresh_token).toBe(refreshes + 1);
    const grant = (await h.connections('fault')).body.connections[0];
    expect(grant.status).toBe('active');
    expect(Date.parse(grant.expiresAt)).toBe(h.clock.now() + 300_000);

    // The next round spends the rotated refresh token: it works only if that token was stored.
    h.clock.advance(INTO_REFRESH_WINDOW);
    const next = await h.proxy('fault');
    expect(next.status).toBe(200);
    expect(h.provider.counts.refresh_token).toBe(refreshes + 2);
    expect((await h.connections('fault')).body.connections[0].status).toBe('active');
  });

  /** The backend waiting for the grant's row lock (the refresh's transaction). */
  async function lockWaiter(): Promise<number> {
    for (;;) {
      const { rows } = await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
      );
      if (rows[0]) return rows[0].pid;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  // Issue 29: a database fault before the provider is asked spends nothing: the refresh tries once more.
  it('retries once on a fresh connection and refreshes once when the lock connection dies first', async () => {
    expect(redirectQuery(await h.connect('retried')).get('status')).toBe('success');
    h.clock.advance(INTO_REFRESH_WINDOW);
    const refreshes = h.provider.counts.refresh_token;
    await admin.query('BEGIN');
    await admin.query('SELECT id FROM connections WHERE user_id = $1 FOR UPDATE', ['retried']);
    const pending = h.proxy('retried');
    const pid = await lockWaiter();
    const { rows } = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]);
    expect(rows[0]?.ok).toBe(true);
    await admin.query('COMMIT');
    const reply = await pending;
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({ id: 'user-1', name: 'Ada' });
    expect(h.provider.counts.refresh_token).toBe(refreshes + 1);
    expect((await h.connections('retried')).body.connections[0].status).toBe('active');
  });
});

// Issue 23, item 3: a server that closes while a refresh waits for its provider (its call already
// answered 504) keeps the database open until the answer is stored.
describe.runIf(hasPostgres())('refresh outliving its call when the server closes [postgres]', () => {
  const TIMEOUT_MS = 1_000;
  let h: Harness;
  let admin: pg.Client;
  beforeAll(async () => {
    h = await startHarness('postgres', { env: { UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS) } });
    admin = new pg.Client({ connectionString: h.server.databaseUrl });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await h?.close();
  });

  it('stores the late answer before the database closes', async () => {
    expect(redirectQuery(await h.connect('closing')).get('status')).toBe('success');
    h.clock.advance(INTO_REFRESH_WINDOW);
    h.provider.delayTokenAnswer(TIMEOUT_MS + 500);
    try {
      expect((await h.proxy('closing')).status).toBe(504);
      await h.server.app.close();
    } finally {
      h.provider.delayTokenAnswer(0);
    }
    const { rows } = await admin.query<{ expires_at: Date }>(
      "SELECT expires_at FROM connections WHERE user_id = 'closing'",
    );
    expect(rows[0]?.expires_at.getTime()).toBe(h.clock.now() + 300_000);
  });
});
