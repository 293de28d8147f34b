/**
 * The call log writer's own rules (server/observe/call-log.ts), each pinned on a CallLog of its own
 * over a real database behind a door the test opens (`heldDatabase`): a record is dropped and
 * counted when the log is closed or `maxBuffered` records wait; a batch is written at exactly
 * `batch` records, one write at a time; the first waiting record arms one flush timer, none while
 * a write runs, and a record that arrives as a write ends re-arms it; close() writes what waits,
 * drops what comes later, and gives a hung write five seconds; a refused batch is dropped, counted
 * and logged at most once a minute.
 *
 * PGlite only: the rules are the writer's, whatever the database; the encodings are checked on
 * both backends in call-log-writer.test.ts.
 */
import type { Logger } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import { type Database, openDatabase } from '../../server/db/database.ts';
import { CallLog, type CallLogSettings, type CallRecord } from '../../server/observe/call-log.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

const record = (requestId: string): CallRecord => ({
  at: Date.parse('2026-11-28T04:00:00.000Z'),
  durationMs: 3,
  surface: 'rest',
  keyId: 'key_rules',
  clientId: 'cli_rules',
  userId: null,
  appId: 'rules',
  toolId: 'rules:::getItem',
  outcome: 'ok',
  status: 200,
  upstreamStatus: 200,
  idempotentReplay: false,
  requestId,
});

/** The request ids of an INSERT's batch, from its last parameter (an array literal or an array). */
const requestIdsOf = (params: unknown[] | undefined): string[] => {
  const column = params?.[12];
  return typeof column === 'string' ? JSON.parse(`[${column.slice(1, -1)}]`) : (column as string[]);
};

/** A whole turn of the event loop: every promise continuation queued so far has run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

const WARNING =
  'call log: a batch could not be written; its records are dropped (toolgate_call_log_dropped_total)';

let database: TestDatabase;
let db: Database;

beforeAll(async () => {
  database = await createTestDatabase('pglite');
  db = await openDatabase(database.url);
});
afterAll(async () => {
  await db?.close();
  await database?.drop();
});
/** The fake timers the writer armed that have neither fired nor been cleared. */
const armed = new Set<unknown>();
/** How many timers the writer has armed now. */
const writerTimers = () => armed.size;
/** The fake clock's own setTimeout and clearTimeout, under the wrappers that count. */
let fakes: Pick<typeof globalThis, 'setTimeout' | 'clearTimeout'>;

beforeEach(async () => {
  await db.queryDirect('DELETE FROM call_log');
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'Date'],
    now: Date.parse('2026-11-28T04:00:00Z'),
  });
  // Only the writer's timers count: vi.getTimerCount() counts the database's too (PGlite's
  // PostgreSQL armed one of its own in a few runs on a loaded machine). A timer is the writer's
  // when call-log.ts called setTimeout.
  armed.clear();
  fakes = { setTimeout: globalThis.setTimeout, clearTimeout: globalThis.clearTimeout };
  const { setTimeout: fakeSet, clearTimeout: fakeClear } = fakes;
  globalThis.setTimeout = ((callback: () => void, ms?: number) => {
    const timer = fakeSet(() => {
      armed.delete(timer);
      callback();
    }, ms);
    if (new Error().stack?.includes('observe/call-log.ts')) armed.add(timer);
    return timer;
  }) as typeof setTimeout;
  globalThis.clearTimeout = ((timer: NodeJS.Timeout | undefined) => {
    armed.delete(timer);
    fakeClear(timer);
  }) as typeof clearTimeout;
});
afterEach(() => {
  // The fakes back first: uninstalling finds the real functions only through them (on a function
  // of its own it deletes the global instead, and the next file in this worker has no setTimeout).
  Object.assign(globalThis, fakes);
  vi.useRealTimers();
});

/** The request ids stored, in the order written. */
const stored = async () =>
  (await db.queryDirect<{ request_id: string }>('SELECT request_id FROM call_log ORDER BY id')).map(
    (row) => row.request_id,
  );

/**
 * The real database behind a door: each INSERT waits in `held` (with its batch's request ids) until
 * the test opens it, which runs it on the database and resolves to when the writer has it.
 */
function heldDatabase() {
  const held: Array<{ requestIds: string[]; open: () => Promise<void> }> = [];
  const seam: Pick<Database, 'queryDirect'> = {
    queryDirect: <Row>(sql: string, params?: unknown[]) =>
      new Promise<Row[]>((resolve, reject) => {
        held.push({
          requestIds: requestIdsOf(params),
          open: async () => {
            await db.queryDirect<Row>(sql, params).then(resolve, reject);
            await settle();
          },
        });
      }),
  };
  /** Opens the door of the oldest waiting INSERT; answers its request ids. */
  const openNext = async () => {
    const next = held.shift();
    if (!next) throw new Error('no INSERT is waiting');
    await next.open();
    return next.requestIds;
  };
  return { seam, held, openNext };
}

function callLog(seam: Pick<Database, 'queryDirect'>, settings: Partial<CallLogSettings>, logger = {}) {
  const counts = { written: 0, dropped: 0 };
  let onWritten = () => {};
  const log = new CallLog(
    seam,
    { enabled: true, flushMs: 1_000, batch: 10, maxBuffered: 10, ...settings },
    {
      written: (n) => {
        counts.written += n;
        const run = onWritten;
        onWritten = () => {};
        run();
      },
      dropped: (n) => (counts.dropped += n),
    },
    logger as Logger,
  );
  /** Runs `then` once, as the next write is counted: before the writer has finished with it. */
  const afterNextWrite = (then: () => void) => {
    onWritten = then;
  };
  return { log, counts, afterNextWrite };
}

it('drops (and counts) a record when maxBuffered records wait; those that waited are written', async () => {
  const { log, counts } = callLog(db, { batch: 10, maxBuffered: 3 });
  for (const id of ['r0', 'r1', 'r2', 'r3', 'r4']) log.record(record(id));
  expect(counts).toEqual({ written: 0, dropped: 2 });
  await log.flush();
  expect(counts).toEqual({ written: 3, dropped: 2 });
  expect(await stored()).toEqual(['r0', 'r1', 'r2']);
});

it('writes at exactly `batch` records, one write at a time; maxBuffered counts only what waits', async () => {
  const { seam, held, openNext } = heldDatabase();
  const { log, counts } = callLog(seam, { batch: 2, maxBuffered: 2, flushMs: 60_000 });
  log.record(record('r0'));
  expect(held).toEqual([]);
  expect(writerTimers()).toBe(1);
  log.record(record('r1'));
  // The batch is full: written now, the flush timer cleared.
  expect(held.map((insert) => insert.requestIds)).toEqual([['r0', 'r1']]);
  expect(writerTimers()).toBe(0);
  // A full batch again while the first is written: no second write, and no timer.
  log.record(record('r2'));
  log.record(record('r3'));
  expect(held.map((insert) => insert.requestIds)).toEqual([['r0', 'r1']]);
  expect(writerTimers()).toBe(0);
  // Two wait beside the batch being written: the next is one too many.
  log.record(record('r4'));
  expect(counts).toEqual({ written: 0, dropped: 1 });

  expect(await openNext()).toEqual(['r0', 'r1']);
  expect(held.map((insert) => insert.requestIds)).toEqual([['r2', 'r3']]);
  expect(await openNext()).toEqual(['r2', 'r3']);
  await log.flush();
  expect(counts).toEqual({ written: 4, dropped: 1 });
  expect(held).toEqual([]);
  expect(writerTimers()).toBe(0);
  expect(await stored()).toEqual(['r0', 'r1', 'r2', 'r3']);
});

it('arms one flush timer for the first waiting record, which writes all that wait flushMs later', async () => {
  const { seam, held, openNext } = heldDatabase();
  const { log, counts } = callLog(seam, { flushMs: 1_000 });
  log.record(record('r0'));
  expect(writerTimers()).toBe(1);
  vi.advanceTimersByTime(500);
  log.record(record('r1'));
  expect(writerTimers()).toBe(1);
  vi.advanceTimersByTime(499);
  expect(held).toEqual([]);
  vi.advanceTimersByTime(1);
  expect(held.map((insert) => insert.requestIds)).toEqual([['r0', 'r1']]);
  expect(await openNext()).toEqual(['r0', 'r1']);
  expect(counts).toEqual({ written: 2, dropped: 0 });
  // Nothing waits: no timer is left armed.
  expect(writerTimers()).toBe(0);
  expect(await stored()).toEqual(['r0', 'r1']);
});

it('keeps a record that comes while a write runs for its own timer, not the next INSERT', async () => {
  const { seam, held, openNext } = heldDatabase();
  const { log, counts } = callLog(seam, { flushMs: 1_000 });
  log.record(record('r0'));
  vi.advanceTimersByTime(1_000);
  expect(held.map((insert) => insert.requestIds)).toEqual([['r0']]);
  log.record(record('r1'));
  expect(writerTimers()).toBe(1);
  vi.advanceTimersByTime(400);
  expect(await openNext()).toEqual(['r0']);
  // The write has ended and r1 has waited 400 ms of its 1,000: no INSERT yet.
  expect(held).toEqual([]);
  expect(writerTimers()).toBe(1);
  vi.advanceTimersByTime(599);
  expect(held).toEqual([]);
  vi.advanceTimersByTime(1);
  expect(await openNext()).toEqual(['r1']);
  expect(counts).toEqual({ written: 2, dropped: 0 });
  expect(writerTimers()).toBe(0);
  expect(await stored()).toEqual(['r0', 'r1']);
});

it('under a steady flow writes full batches, not the few records each INSERT left behind', async () => {
  const { seam, held, openNext } = heldDatabase();
  const { log, counts } = callLog(seam, { batch: 4, maxBuffered: 100, flushMs: 1_000 });
  let next = 0;
  const arrive = (n: number) => {
    for (let i = 0; i < n; i += 1) log.record(record(`r${next++}`));
  };
  arrive(4);
  // Each INSERT takes its time: two records come while it runs, then it ends.
  const sizes: number[] = [];
  for (let round = 0; round < 6; round += 1) {
    arrive(2);
    if (held.length > 0) sizes.push((await openNext()).length);
  }
  // Before, the end of each INSERT wrote the two that came meanwhile: 4, 2, 2, 2, 2, 2.
  expect(sizes).toEqual([4, 4, 4, 4]);
  expect(held).toEqual([]);
  arrive(1);
  expect(writerTimers()).toBe(1);
  const flushed = log.flush();
  expect(await openNext()).toEqual(['r16']);
  await flushed;
  expect(counts).toEqual({ written: 17, dropped: 0 });
  expect(await stored()).toEqual(Array.from({ length: 17 }, (_, i) => `r${i}`));
});

it('re-arms the flush timer for a record that arrives as a write ends', async () => {
  const { seam, held, openNext } = heldDatabase();
  const { log, counts, afterNextWrite } = callLog(seam, {});
  log.record(record('r0'));
  vi.advanceTimersByTime(1_000);
  // r1 comes after the writer found nothing more to write, before it has finished: no write takes
  // it and none is running to arm a timer; the ending write must.
  afterNextWrite(() => queueMicrotask(() => log.record(record('r1'))));
  expect(await openNext()).toEqual(['r0']);
  expect(held).toEqual([]);
  expect(writerTimers()).toBe(1);
  vi.advanceTimersByTime(999);
  expect(held).toEqual([]);
  vi.advanceTimersByTime(1);
  expect(await openNext()).toEqual(['r1']);
  expect(counts).toEqual({ written: 2, dropped: 0 });
  expect(writerTimers()).toBe(0);
  expect(await stored()).toEqual(['r0', 'r1']);
});

it('writes at once a batch that fills as a write ends, without waiting for a timer', async () => {
  const { seam, held, openNext } = heldDatabase();
  const { log, counts, afterNextWrite } = callLog(seam, { batch: 2 });
  log.record(record('r0'));
  log.record(record('r1'));
  // r2 and r3 come after the writer found nothing more to write, before it has finished.
  afterNextWrite(() =>
    queueMicrotask(() => {
      log.record(record('r2'));
      log.record(record('r3'));
    }),
  );
  expect(await openNext()).toEqual(['r0', 'r1']);
  expect(held.map((insert) => insert.requestIds)).toEqual([['r2', 'r3']]);
  expect(writerTimers()).toBe(0);
  expect(await openNext()).toEqual(['r2', 'r3']);
  expect(counts).toEqual({ written: 4, dropped: 0 });
  expect(await stored()).toEqual(['r0', 'r1', 'r2', 'r3']);
});

it('close() writes what waits, then drops (and counts) every later record', async () => {
  const { log, counts } = callLog(db, {});
  log.record(record('r0'));
  log.record(record('r1'));
  await log.close();
  expect(counts).toEqual({ written: 2, dropped: 0 });
  expect(writerTimers()).toBe(0);
  log.record(record('r2'));
  expect(counts).toEqual({ written: 2, dropped: 1 });
  expect(writerTimers()).toBe(0);
  await log.flush();
  expect(counts).toEqual({ written: 2, dropped: 1 });
  expect(await stored()).toEqual(['r0', 'r1']);
});

it('close() gives a write that hangs five seconds, then lets the database close', async () => {
  const { seam, held, openNext } = heldDatabase();
  const { log, counts } = callLog(seam, {});
  log.record(record('r0'));
  let closed = false;
  const closing = log.close().then(() => {
    closed = true;
  });
  expect(held.map((insert) => insert.requestIds)).toEqual([['r0']]);
  await vi.advanceTimersByTimeAsync(4_999);
  expect(closed).toBe(false);
  await vi.advanceTimersByTimeAsync(1);
  expect(closed).toBe(true);
  await closing;
  // The write still ends in the database when it can.
  expect(await openNext()).toEqual(['r0']);
  expect(counts).toEqual({ written: 1, dropped: 0 });
  expect(await stored()).toEqual(['r0']);
});

it('drops and counts a refused batch, and logs it at most once a minute', async () => {
  const refusal = new Error('relation "call_log" does not exist');
  const refusing: Pick<Database, 'queryDirect'> = { queryDirect: () => Promise.reject(refusal) };
  const warnings: unknown[][] = [];
  const { log, counts } = callLog(
    refusing,
    { batch: 2 },
    { warn: (...args: unknown[]) => warnings.push(args) },
  );
  const start = Date.now();
  const failAt = async (offsetMs: number, records: number) => {
    vi.setSystemTime(start + offsetMs);
    for (let i = 0; i < records; i += 1) log.record(record(`r${offsetMs}-${i}`));
    await log.flush();
  };
  await failAt(0, 2);
  await failAt(59_999, 1);
  await failAt(60_000, 3);
  await failAt(60_001, 1);
  await failAt(119_999, 1);
  await failAt(120_000, 1);
  expect(counts).toEqual({ written: 0, dropped: 9 });
  expect(warnings).toEqual([
    [{ err: refusal, dropped: 2 }, WARNING],
    // Three records, a batch of two: the first batch is the one logged.
    [{ err: refusal, dropped: 2 }, WARNING],
    [{ err: refusal, dropped: 1 }, WARNING],
  ]);
});
