import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';

/** The surface a tool call came in on (docs/reference.md "Call log"). */
export type Surface = 'rest' | 'trpc' | 'mcp';

/**
 * One tool call as the call log keeps it: who called what for whom and how it ended. Never the
 * parameters, a body or a token: nothing here can hold one (ids, codes, statuses, times).
 */
export interface CallRecord {
  /** Arrival, ms since the epoch (the injected clock's). */
  at: number;
  durationMs: number;
  surface: Surface;
  keyId: string | null;
  clientId: string;
  userId: string | null;
  appId: string | null;
  toolId: string | null;
  /** `ok`, or the contract error code the call answered. */
  outcome: string;
  /** The contract status of the outcome (200, or the error's), whatever the surface's wire said. */
  status: number;
  upstreamStatus: number | null;
  idempotentReplay: boolean;
  requestId: string;
}

export interface CallLogSettings {
  /** false when CALL_LOG_DAYS=0: nothing is kept. */
  enabled: boolean;
  /** A record waits at most this long before its batch is written. */
  flushMs: number;
  /** Records per INSERT. */
  batch: number;
  /** Records waiting in memory at most; past it new ones are dropped (and counted). */
  maxBuffered: number;
}

/** How often a failing write is logged at most: a database away for an hour is one line a minute. */
const WARN_EVERY_MS = 60_000;
/** How long close() waits for the last batch before it lets the database close anyway. */
const CLOSE_WAIT_MS = 5_000;

/**
 * The call log's writer. A call hands its record to `record()`, which only pushes it on an array:
 * nothing on the call's path waits for the database, and no fault of the database can reach the
 * call. Records are written in batches (one multi-row INSERT) by one write at a time, so the log
 * never holds more than one database connection, whatever the rate of calls. A batch is written
 * when it is full, or when its first record has waited `flushMs`: never sooner. Records that come
 * while a write runs wait for their own batch to fill or their own timer — the writer once took
 * them at the end of each write, and under a steady load its batches shrank to the few records
 * that came during the last INSERT, each INSERT's fixed cost spread over a handful of records
 * (BENCHMARKS.md, call log). A batch the database refuses is dropped and counted (`onDropped`),
 * never retried: a retry would hold memory for a database that may stay away, and the count tells
 * the operator what is missing.
 */
export class CallLog {
  #buffer: CallRecord[] = [];
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> | undefined;
  /** The waiting records' time is up (their timer fired, or flush): a partial batch goes too. */
  #due = false;
  #lastWarnAt = Number.NEGATIVE_INFINITY;
  #closed = false;

  constructor(
    private readonly db: Pick<Database, 'queryDirect'>,
    private readonly settings: CallLogSettings,
    private readonly counters: { written(count: number): void; dropped(count: number): void },
    private readonly logger: Logger,
  ) {}

  /** Queues one call's record; returns at once. */
  record(entry: CallRecord): void {
    if (!this.settings.enabled) return;
    if (this.#closed || this.#buffer.length >= this.settings.maxBuffered) {
      this.counters.dropped(1);
      return;
    }
    this.#buffer.push(entry);
    if (this.#buffer.length >= this.settings.batch) this.#write();
    else if (this.#timer === undefined) this.#arm();
  }

  /** Writes what is queued now and resolves when it is written (or dropped): for tests and close(). */
  async flush(): Promise<void> {
    while (this.#buffer.length > 0 || this.#writing) {
      this.#due = true;
      this.#write();
      await this.#writing;
    }
  }

  /** Writes what is queued (waiting at most a few seconds); later records are dropped. */
  async close(): Promise<void> {
    this.#closed = true;
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([
      this.flush(),
      new Promise<void>((resolve) => {
        timeout = setTimeout(resolve, CLOSE_WAIT_MS);
      }),
    ]);
    clearTimeout(timeout);
  }

  /** The timer of the oldest waiting record: when it fires, whatever waits is written. */
  #arm(): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#due = true;
      this.#write();
    }, this.settings.flushMs);
    this.#timer.unref();
  }

  /**
   * Starts the writer unless it runs (a running writer sees a full batch or `#due` when its INSERT
   * ends); once it ends, a record still waiting without a timer gets one.
   */
  #write(): void {
    if (this.#buffer.length >= this.settings.batch || this.#due) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#writing) return;
    // A batch belongs to no request: with tracing on, its INSERT is a root span, not the child of
    // whichever call armed the timer (the timer keeps that call's context).
    this.#writing = context
      .with(ROOT_CONTEXT, () => this.#drain())
      .finally(() => {
        this.#writing = undefined;
        if (this.#closed) return;
        // A batch filled between the drain's last look and now (a record pushed by a promise
        // continuation) goes at once; anything less waits for its timer.
        if (this.#buffer.length >= this.settings.batch) this.#write();
        else if (this.#buffer.length > 0 && this.#timer === undefined) this.#arm();
      });
  }

  /** Full batches, and what waits once its time is up; then returns, leaving the rest to wait. */
  async #drain(): Promise<void> {
    while (this.#buffer.length >= this.settings.batch || (this.#due && this.#buffer.length > 0)) {
      const batch = this.#buffer.splice(0, this.settings.batch);
      if (this.#buffer.length === 0) this.#due = false;
      try {
        await insertBatch(this.db, batch);
        this.counters.written(batch.length);
      } catch (error) {
        this.counters.dropped(batch.length);
        const now = Date.now();
        if (now - this.#lastWarnAt >= WARN_EVERY_MS) {
          this.#lastWarnAt = now;
          // The error of a driver says which statement failed and why; it holds no record's values.
          this.logger.warn(
            { err: error, dropped: batch.length },
            'call log: a batch could not be written; its records are dropped (toolgate_call_log_dropped_total)',
          );
        }
      }
    }
  }
}

/** The record's text columns. */
type TextField = 'surface' | 'keyId' | 'clientId' | 'userId' | 'appId' | 'toolId' | 'outcome' | 'requestId';

/** A backslash in JSON text that escapes neither a quote nor a backslash (\n, \t, \u0000…). */
const OTHER_ESCAPE = /\\[^"\\]/;

/**
 * One column as the PostgreSQL array literal the driver would send, made by V8's JSON.stringify:
 * the drivers build theirs element by element in JavaScript (two regular expressions a text), a
 * third of the writer's CPU in the server: 3.5 µs a record then, 2.3 now (BENCHMARKS.md, call log). Between its brackets, JSON's text of numbers, booleans, nulls and
 * quoted texts is an array literal meaning the same, as long as its only escapes are \" and \\
 * (the literal's too). A text with a control character (JSON writes \t, \u0000…) sends its column
 * as the array it is, for the driver to write.
 */
function arrayLiteral(values: unknown[]): string | unknown[] {
  const json = JSON.stringify(values);
  return OTHER_ESCAPE.test(json) ? values : `{${json.slice(1, -1)}}`;
}

/**
 * One INSERT of the whole batch, a column per array parameter (unnest): thirteen parameters
 * whatever the batch's size, sent on the driver itself. Through Prisma, the arrays went through
 * its query engine's parameter handling: createMany cost about half a millisecond of CPU per row,
 * and `$executeRaw` of this statement still 25–30 µs per row, 16 % of a call's CPU at 5,000
 * calls a second (BENCHMARKS.md, call log).
 */
async function insertBatch(db: Pick<Database, 'queryDirect'>, batch: CallRecord[]): Promise<void> {
  const column = <K extends keyof CallRecord>(key: K) => arrayLiteral(batch.map((record) => record[key]));
  // Text a caller chose (a tool id as asked, an OIDC subject) can hold a lone surrogate, which no
  // UTF-8 can carry. The pg driver writes U+FFFD for it; PGlite miscounts the bytes of its message
  // (one after a non-ASCII character) and the database refuses the whole batch. Made well-formed
  // here, every text is U+FFFD in its place on both; a one-byte string is returned as it is.
  const text = (key: TextField) => arrayLiteral(batch.map((record) => record[key]?.toWellFormed() ?? null));
  await db.queryDirect(
    `INSERT INTO call_log (at, duration_ms, surface, key_id, client_id, user_id, app_id, tool_id,
                           outcome, status, upstream_status, idempotent_replay, request_id)
     SELECT to_timestamp(at_ms / 1000.0) AT TIME ZONE 'UTC', duration_ms, surface, key_id, client_id,
            user_id, app_id, tool_id, outcome, status, upstream_status, idempotent_replay, request_id
     FROM unnest($1::float8[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                 $8::text[], $9::text[], $10::int[], $11::int[], $12::bool[], $13::text[])
       AS r(at_ms, duration_ms, surface, key_id, client_id, user_id, app_id, tool_id, outcome, status,
            upstream_status, idempotent_replay, request_id)`,
    [
      column('at'),
      column('durationMs'),
      text('surface'),
      text('keyId'),
      text('clientId'),
      text('userId'),
      text('appId'),
      text('toolId'),
      text('outcome'),
      column('status'),
      column('upstreamStatus'),
      column('idempotentReplay'),
      text('requestId'),
    ],
  );
}
