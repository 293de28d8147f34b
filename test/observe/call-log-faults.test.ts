/**
 * The call log against a failing database (docs/reference.md "Call log"): calls under load keep
 * answering, at their usual speed, while the log's table is unwritable, while its writes hang on
 * a lock, and while the server's database connections are cut; the records lost are counted in
 * toolgate_call_log_dropped_total; the log resumes when the database does. And its retention:
 * records past CALL_LOG_DAYS are purged, by two servers at once without deleting anything twice.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { CallLog } from '../../server/observe/call-log.ts';
import { purgeOldCalls } from '../../server/observe/call-log-purge.ts';
import { type Agent, provisionAgent, proxy, registerApp } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { call, startServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

const DAY = 24 * 60 * 60 * 1000;

describeBackends('the call log when the database fails', (backend) => {
  let server: TestServer;
  let upstream: Upstream;
  let agent: Agent;

  const metric = async (name: string) => {
    const text = (await call(server.url, 'GET', '/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return Number(line?.split(' ')[1] ?? Number.NaN);
  };
  /** `waves` waves of `width` concurrent calls; answers every status and the slowest call's time. */
  const load = async (waves: number, width: number, during?: (wave: number) => Promise<void>) => {
    const statuses: number[] = [];
    let slowest = 0;
    for (let wave = 0; wave < waves; wave += 1) {
      await during?.(wave);
      const replies = await Promise.all(
        Array.from({ length: width }, async () => {
          const started = performance.now();
          const reply = await proxy(server, agent, {
            toolId: 'faulty:::getItem',
            parameters: { itemId: '1' },
          });
          slowest = Math.max(slowest, performance.now() - started);
          return reply.status;
        }),
      );
      statuses.push(...replies);
    }
    return { statuses, slowest };
  };
  const sql = (text: string) => server.app.deps.db.prisma.$executeRawUnsafe(text);

  beforeAll(async () => {
    [server, upstream] = await Promise.all([
      startServer(backend.name, { env: { RATE_LIMIT_PER_KEY_PER_MIN: '0' } }),
      startUpstream(),
    ]);
    await registerApp(server, 'faulty', {
      provider: 'acme.faulty',
      openapi: upstream.openapi,
      auth: { type: 'none' },
    });
    agent = await provisionAgent(server, ['tools:execute']);
    // Warm: the key verified, the app compiled; its record written.
    expect((await load(1, 1)).statuses).toEqual([200]);
    await server.app.deps.callLog.flush();
  }, 120_000);

  afterAll(async () => {
    await Promise.all([server?.close(), upstream?.close()]);
  });

  it('answers every call while the table is unwritable, counts each lost record, and resumes after', async () => {
    const droppedBefore = await metric('toolgate_call_log_dropped_total');
    await sql('ALTER TABLE call_log RENAME TO call_log_away');
    try {
      const { statuses } = await load(10, 20, () => server.app.deps.callLog.flush());
      expect(statuses).toEqual(Array(200).fill(200));
      await server.app.deps.callLog.flush();
    } finally {
      await sql('ALTER TABLE call_log_away RENAME TO call_log');
    }
    expect((await metric('toolgate_call_log_dropped_total')) - droppedBefore).toBe(200);

    const writtenBefore = await metric('toolgate_call_log_written_total');
    expect((await load(1, 3)).statuses).toEqual([200, 200, 200]);
    await server.app.deps.callLog.flush();
    expect((await metric('toolgate_call_log_written_total')) - writtenBefore).toBe(3);
  }, 120_000);

  it.runIf(backend.name === 'postgres')(
    'answers at full speed while the log is stuck on a lock, and through cut database connections',
    async () => {
      const locker = new pg.Client({ connectionString: server.databaseUrl });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE call_log IN ACCESS EXCLUSIVE MODE');
        // A batch waits on the lock: the log's INSERT is stuck in the database.
        expect((await load(1, 5)).statuses).toEqual(Array(5).fill(200));
        const flushing = server.app.deps.callLog.flush();
        await expect
          .poll(
            async () =>
              (
                await locker.query(
                  "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO call_log%'",
                )
              ).rows[0].n,
            { timeout: 30_000 },
          )
          .toBe(1);
        const stuck = await load(10, 20);
        expect(stuck.statuses).toEqual(Array(200).fill(200));
        // A stuck write would hold each call until the lock goes: none waits anywhere near that.
        expect(stuck.slowest).toBeLessThan(5_000);

        // Cut every connection of the server mid-load, the stuck INSERT's among them.
        const droppedBefore = await metric('toolgate_call_log_dropped_total');
        const cut = await load(5, 20, async (wave) => {
          if (wave !== 2) return;
          await locker.query(
            'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
          );
        });
        expect(cut.statuses).toEqual(Array(100).fill(200));
        // The lock goes: what waited is written, what was cut is counted.
        await locker.query('ROLLBACK');
        await flushing;
        await server.app.deps.callLog.flush();
        expect((await metric('toolgate_call_log_dropped_total')) - droppedBefore).toBeGreaterThan(0);
      } finally {
        await locker.query('ROLLBACK').catch(() => {});
        await locker.end();
      }
      // The pool replaced its connections: the log writes again.
      const writtenBefore = await metric('toolgate_call_log_written_total');
      expect((await load(1, 2)).statuses).toEqual([200, 200]);
      await server.app.deps.callLog.flush();
      expect((await metric('toolgate_call_log_written_total')) - writtenBefore).toBe(2);
    },
    180_000,
  );

  it('purges records past CALL_LOG_DAYS, two servers at once deleting each record once', async () => {
    const prisma = server.app.deps.db.prisma;
    const now = Date.now();
    await prisma.callLogEntry.deleteMany({});
    const row = (at: number, requestId: string) => ({
      at: new Date(at),
      durationMs: 1,
      surface: 'rest',
      keyId: 'key_old',
      clientId: 'cli_old',
      outcome: 'ok',
      status: 200,
      idempotentReplay: false,
      requestId,
    });
    await prisma.callLogEntry.createMany({
      data: [
        ...Array.from({ length: 3_000 }, (_, i) => row(now - 31 * DAY - i, `old-${i}`)),
        row(now - 29 * DAY, 'kept-29d'),
        row(now, 'kept-now'),
      ],
    });
    const clock = manualClock(now);
    const [a, b] = await Promise.all([purgeOldCalls(prisma, 30, clock), purgeOldCalls(prisma, 30, clock)]);
    expect(a + b).toBe(3_000);
    const left = await prisma.callLogEntry.findMany({ select: { requestId: true }, orderBy: { at: 'asc' } });
    expect(left.map((r) => r.requestId)).toEqual(['kept-29d', 'kept-now']);
    // CALL_LOG_DAYS=0 keeps nothing: a purge takes every record.
    expect(await purgeOldCalls(prisma, 0, manualClock(now + 1))).toBe(2);
  });
});

it('CALL_LOG_DAYS=0: the writer keeps no record, and counts none as lost', async () => {
  const counts = { written: 0, dropped: 0 };
  const log = new CallLog(
    {} as never, // never reached: a disabled log writes nothing
    { enabled: false, flushMs: 1, batch: 1, maxBuffered: 1 },
    { written: (n) => (counts.written += n), dropped: (n) => (counts.dropped += n) },
    {} as never,
  );
  log.record({
    at: 0,
    durationMs: 0,
    surface: 'rest',
    keyId: null,
    clientId: 'c',
    userId: null,
    appId: null,
    toolId: null,
    outcome: 'ok',
    status: 200,
    upstreamStatus: null,
    idempotentReplay: false,
    requestId: 'r',
  });
  await log.flush();
  expect(counts).toEqual({ written: 0, dropped: 0 });
});
