// Issue 11 §2: the provider's answer to a refresh (a rotated refresh token) must be stored even
// when the database connection holding the grant's row lock dies after the provider answered.
// Real PostgreSQL: the lock's backend is killed with pg_terminate_backend mid-refresh.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LIMITS } from '../../server/config.ts';
import { hasPostgres } from '../support/db.ts';
import type { Reply } from '../support/server.ts';
import { APP_ID, type Harness, redirectQuery, startHarness } from './harness.ts';

const INTO_REFRESH_WINDOW = 300_000 - LIMITS.refreshSkewMs;

/**
 * The backend waiting for a row lock in this database (the refresh's transaction), other than `not`;
 * fails at once if the call it waits for answered instead.
 */
async function lockWaiter(admin: pg.Client, call: Promise<Reply>, not?: number): Promise<number> {
  let answered: Reply | undefined;
  void call.then((reply) => {
    answered = reply;
  });
  for (;;) {
    if (answered) throw new Error(`answered ${answered.status} ${answered.text} before waiting for the lock`);
    const { rows } = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
    );
    const found = rows.find((row) => row.pid !== not);
    if (found) return found.pid;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function terminate(admin: pg.Client, pid: number): Promise<void> {
  const { rows } = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]);
  expect(rows[0]?.ok).toBe(true);
}

/** The server's log lines with this message, parsed. */
function logged(h: Harness, msg: string): Array<Record<string, unknown>> {
  return h.server.logs
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .filter((line) => line.msg === msg);
}

const GRANT_CHANGED = 'oauth refresh: the grant changed meanwhile; the fresh token serves this call only';
const NOT_STORED = 'oauth refresh: the answer could not be stored; the fresh token serves this call only';
const SAVING_ANEW = 'oauth refresh: the lock connection failed after the provider answered; saving anew';

/** A PostgreSQL harness and a connection of our own to its database (to lock rows, kill backends). */
async function startFaultHarness(timeoutMs: number): Promise<{ h: Harness; admin: pg.Client }> {
  const h = await startHarness('postgres', { env: { UPSTREAM_TIMEOUT_MS: String(timeoutMs) } });
  const admin = new pg.Client({ connectionString: h.server.databaseUrl });
  await admin.connect();
  return { h, admin };
}

async function stopFaultHarness(h: Harness | undefined, admin: pg.Client | undefined): Promise<void> {
  await admin?.end();
  await h?.close();
}

/** The backend of `admin`'s database sitting in an open transaction (the refresh holding the row lock). */
async function lockHolder(admin: pg.Client): Promise<number> {
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

describe.runIf(hasPostgres())('refresh when the lock connection dies [postgres]', () => {
  let h: Harness;
  let admin: pg.Client;
  beforeAll(async () => {
    ({ h, admin } = await startFaultHarness(5_000));
  });
  afterAll(() => stopFaultHarness(h, admin));

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
      const pid = await lockHolder(admin);
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

  // Issue 29: a database fault before the provider is asked spends nothing: the refresh tries once more.
  it('retries once on a fresh connection and refreshes once when the lock connection dies first', async () => {
    expect(redirectQuery(await h.connect('retried')).get('status')).toBe('success');
    h.clock.advance(INTO_REFRESH_WINDOW);
    const refreshes = h.provider.counts.refresh_token;
    await admin.query('BEGIN');
    await admin.query('SELECT id FROM connections WHERE user_id = $1 FOR UPDATE', ['retried']);
    const retries = logged(h, 'oauth refresh transaction failed; retrying once').length;
    const pending = h.proxy('retried');
    await terminate(admin, await lockWaiter(admin, pending));
    await admin.query('COMMIT');
    const reply = await pending;
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({ id: 'user-1', name: 'Ada' });
    expect(h.provider.counts.refresh_token).toBe(refreshes + 1);
    expect((await h.connections('retried')).body.connections[0].status).toBe('active');
    expect(logged(h, 'oauth refresh transaction failed; retrying once').slice(retries)).toEqual([
      expect.objectContaining({ level: 40, appId: APP_ID, err: expect.any(Object) }),
    ]);
  });
});

// Issue 29: the fault paths on each side of the provider's answer, on a server of their own (after
// the two kills above, a second retry on the same server was seen waiting past the call's time-out
// on a loaded machine; not diagnosed, see BENCHMARKS.md).
describe.runIf(hasPostgres())(
  'refresh when the database fails around the provider’s answer [postgres]',
  () => {
    let h: Harness;
    let admin: pg.Client;
    beforeAll(async () => {
      ({ h, admin } = await startFaultHarness(5_000));
    });
    afterAll(() => stopFaultHarness(h, admin));

    it('gives up after a second database failure before the provider is asked: 500, nothing spent, the grant kept', async () => {
      expect(redirectQuery(await h.connect('twice')).get('status')).toBe('success');
      h.clock.advance(INTO_REFRESH_WINDOW);
      const refreshes = h.provider.counts.refresh_token;
      await admin.query('BEGIN');
      await admin.query('SELECT id FROM connections WHERE user_id = $1 FOR UPDATE', ['twice']);
      const pending = h.proxy('twice');
      try {
        const first = await lockWaiter(admin, pending);
        await terminate(admin, first);
        await terminate(admin, await lockWaiter(admin, pending, first));
      } finally {
        // Released: a third attempt (there must be none) would get the lock and refresh.
        await admin.query('COMMIT');
      }
      const reply = await pending;
      expect(reply.status).toBe(500);
      expect(reply.body).toEqual({
        ok: false,
        error: 'internal_error',
        message: 'The server failed to handle this request.',
      });
      expect(h.provider.counts.refresh_token).toBe(refreshes);
      expect((await h.connections('twice')).body.connections[0].status).toBe('active');
      // Nothing was spent: the next call refreshes with the same refresh token.
      expect((await h.proxy('twice')).status).toBe(200);
      expect(h.provider.counts.refresh_token).toBe(refreshes + 1);
    });

    /** The grant's sealed credential as stored. */
    async function credentialOf(userId: string): Promise<Buffer | undefined> {
      const { rows } = await admin.query<{ credential: Buffer }>(
        'SELECT credential FROM connections WHERE user_id = $1',
        [userId],
      );
      return rows[0]?.credential;
    }

    /**
     * Kills the refresh's lock connection once the provider has refreshed (its answer held back), then
     * lets `meanwhile` write the grant before the answer is saved anew; answers the call's reply.
     */
    async function refreshOvertaken(userId: string, meanwhile: () => Promise<unknown>) {
      h.clock.advance(INTO_REFRESH_WINDOW);
      const refreshes = h.provider.counts.refresh_token;
      h.provider.delayTokenAnswer(1_000);
      try {
        const pending = h.proxy(userId);
        // Not before: a kill before the provider is asked would only make the refresh start over.
        await vi.waitFor(() => expect(h.provider.counts.refresh_token).toBe(refreshes + 1), {
          timeout: 5_000,
          interval: 10,
        });
        await terminate(admin, await lockHolder(admin));
        await meanwhile();
        return await pending;
      } finally {
        h.provider.delayTokenAnswer(0);
      }
    }

    it('saves the answer anew when the lock connection died after the provider answered and nobody else wrote', async () => {
      expect(redirectQuery(await h.connect('resaved')).get('status')).toBe('success');
      const [changed, lost] = [logged(h, GRANT_CHANGED).length, logged(h, NOT_STORED).length];
      const refreshes = h.provider.counts.refresh_token;
      const reply = await refreshOvertaken('resaved', async () => {});
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual({ id: 'user-1', name: 'Ada' });
      const grant = (await h.connections('resaved')).body.connections[0];
      expect([grant.status, Date.parse(grant.expiresAt)]).toEqual(['active', h.clock.now() + 300_000]);
      expect([logged(h, GRANT_CHANGED).length, logged(h, NOT_STORED).length]).toEqual([changed, lost]);
      // The next refresh spends the rotated refresh token: it works only if the answer was stored.
      h.clock.advance(INTO_REFRESH_WINDOW);
      expect((await h.proxy('resaved')).status).toBe(200);
      expect(h.provider.counts.refresh_token).toBe(refreshes + 2);
    });

    it('keeps what another writer stored meanwhile when the lock connection died: the fresh token serves the call only', async () => {
      expect(redirectQuery(await h.connect('overtaken')).get('status')).toBe('success');
      const older = await credentialOf('overtaken');
      expect(redirectQuery(await h.connect('overtaken')).get('status')).toBe('success');
      const [changed, lost] = [logged(h, GRANT_CHANGED).length, logged(h, NOT_STORED).length];
      const reply = await refreshOvertaken('overtaken', () =>
        admin.query('UPDATE connections SET credential = $1 WHERE user_id = $2', [older, 'overtaken']),
      );
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual({ id: 'user-1', name: 'Ada' });
      // The conditional save lost to the other write, which stays.
      expect(await credentialOf('overtaken')).toEqual(older);
      expect(logged(h, GRANT_CHANGED).slice(changed)).toEqual([
        expect.objectContaining({ level: 40, appId: APP_ID, clientId: h.agent.clientId }),
      ]);
      expect(logged(h, NOT_STORED).length).toBe(lost);
      expect(logged(h, SAVING_ANEW).at(-1)).toMatchObject({
        level: 40,
        appId: APP_ID,
        err: expect.any(Object),
      });
    });

    it('answers with the fresh token when the grant was deleted meanwhile, and stores nothing', async () => {
      expect(redirectQuery(await h.connect('vanished')).get('status')).toBe('success');
      const [changed, lost] = [logged(h, GRANT_CHANGED).length, logged(h, NOT_STORED).length];
      const reply = await refreshOvertaken('vanished', () =>
        admin.query('DELETE FROM connections WHERE user_id = $1', ['vanished']),
      );
      expect(reply.status).toBe(200);
      expect(await credentialOf('vanished')).toBeUndefined();
      expect(logged(h, GRANT_CHANGED).length).toBe(changed + 1);
      expect(logged(h, NOT_STORED).length).toBe(lost);
    });

    it('answers with the fresh token when it cannot be stored anew, and says so in the log', async () => {
      expect(redirectQuery(await h.connect('unsaved')).get('status')).toBe('success');
      const lost = logged(h, NOT_STORED).length;
      // A credential no key opens: the conditional save loses, and reading what won fails.
      const reply = await refreshOvertaken('unsaved', () =>
        admin.query("UPDATE connections SET credential = '\\x00' WHERE user_id = $1", ['unsaved']),
      );
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual({ id: 'user-1', name: 'Ada' });
      expect(logged(h, NOT_STORED).slice(lost)).toEqual([
        expect.objectContaining({
          level: 50,
          appId: APP_ID,
          clientId: h.agent.clientId,
          err: expect.any(Object),
        }),
      ]);
    });
  },
);

// Issue 23, item 3: a server that closes while a refresh waits for its provider (its call already
// answered 504) keeps the database open until the answer is stored.
describe.runIf(hasPostgres())('refresh outliving its call when the server closes [postgres]', () => {
  const TIMEOUT_MS = 1_000;
  let h: Harness;
  let admin: pg.Client;
  beforeAll(async () => {
    ({ h, admin } = await startFaultHarness(TIMEOUT_MS));
  });
  afterAll(() => stopFaultHarness(h, admin));

  it('tells in the log a refresh that failed after its call answered 504', async () => {
    expect(redirectQuery(await h.connect('abandoned')).get('status')).toBe('success');
    h.clock.advance(INTO_REFRESH_WINDOW);
    const refreshes = h.provider.counts.refresh_token;
    await admin.query('BEGIN');
    await admin.query('SELECT id FROM connections WHERE user_id = $1 FOR UPDATE', ['abandoned']);
    const pending = h.proxy('abandoned');
    const first = await lockWaiter(admin, pending);
    expect((await pending).status).toBe(504);
    // Nobody waits for the refresh any more: its failure is the log's to tell.
    await terminate(admin, first);
    // The refresh's second attempt (the call has answered: no reply to watch for).
    await terminate(admin, await lockWaiter(admin, new Promise<Reply>(() => {}), first));
    await admin.query('COMMIT');
    await vi.waitFor(() => expect(logged(h, 'oauth refresh failed late')).toHaveLength(1), {
      timeout: 5_000,
      interval: 20,
    });
    expect(logged(h, 'oauth refresh failed late')[0]).toMatchObject({
      level: 50,
      appId: APP_ID,
      clientId: h.agent.clientId,
      err: expect.any(Object),
    });
    expect(h.provider.counts.refresh_token).toBe(refreshes);
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
