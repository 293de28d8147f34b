// The call log's writer on its own (server/observe/call-log.ts): every field of a record comes back
// from the table as it was given, nulls, booleans and the arrival time included, and the text a
// caller chooses (a tool id, a user id) is stored as sent, whatever it holds: quotes, backslashes,
// braces and commas (the writer's array literals), "NULL", non-ASCII, tabs and line breaks. A
// string no UTF-8 can carry (a lone surrogate) is stored with U+FFFD in its place, and costs no
// other record its write.
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../server/db/database.ts';
import { CallLog, type CallRecord } from '../../server/observe/call-log.ts';
import { createTestDatabase, describeBackends, type TestDatabase } from '../support/db.ts';

const base: CallRecord = {
  at: Date.parse('2026-11-28T03:04:05.678Z'),
  durationMs: 12,
  surface: 'rest',
  keyId: 'key_abc',
  clientId: 'cli_abc',
  userId: 'u-1',
  appId: 'logged',
  toolId: 'logged:::getItem',
  outcome: 'ok',
  status: 200,
  upstreamStatus: 200,
  idempotentReplay: false,
  requestId: 'r-base',
};

describeBackends('the call log writer', (backend) => {
  let database: TestDatabase;
  let db: Database;
  const counts = { written: 0, dropped: 0 };

  beforeAll(async () => {
    database = await createTestDatabase(backend.name);
    db = await openDatabase(database.url);
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  const write = async (records: CallRecord[]) => {
    const log = new CallLog(
      db,
      { enabled: true, flushMs: 60_000, batch: 1_000, maxBuffered: 1_000 },
      { written: (n) => (counts.written += n), dropped: (n) => (counts.dropped += n) },
      pino({ level: 'silent' }),
    );
    for (const record of records) log.record(record);
    await log.flush();
  };
  /** The rows of these request ids, every column, in the record's own shape. */
  const readBack = async (requestIds: string[]) => {
    const rows = await db.prisma.callLogEntry.findMany({
      where: { requestId: { in: requestIds } },
      orderBy: { id: 'asc' },
    });
    return rows.map(({ id, at, ...rest }) => ({ ...rest, at: at.getTime() }));
  };

  it('stores every field of every record as given, nulls, booleans and the time to the millisecond', async () => {
    const records: CallRecord[] = [
      base,
      {
        at: Date.parse('2026-01-01T00:00:00.001Z'),
        durationMs: 0,
        surface: 'mcp',
        keyId: null,
        clientId: 'cli_xyz',
        userId: null,
        appId: null,
        toolId: null,
        outcome: 'upstream_error',
        status: 502,
        upstreamStatus: null,
        idempotentReplay: true,
        requestId: 'r-nulls',
      },
      { ...base, at: Date.parse('1999-12-31T23:59:59.999Z'), surface: 'trpc', requestId: 'r-old' },
    ];
    counts.written = 0;
    await write(records);
    expect(counts.written).toBe(3);
    expect(await readBack(records.map((r) => r.requestId))).toEqual(records);
  });

  /** Writes one batch of records whose user id and tool id are these texts; reads them back. */
  const roundTrip = async (texts: string[], name: string) => {
    const records: CallRecord[] = texts.map((text, i) => ({
      ...base,
      userId: text,
      toolId: text,
      requestId: `r-${name}-${i}`,
    }));
    counts.written = 0;
    counts.dropped = 0;
    await write(records);
    return { records, counts: { ...counts }, stored: await readBack(records.map((r) => r.requestId)) };
  };

  // The writer sends a column as the array literal JSON.stringify makes unless JSON escaped more
  // than a quote or a backslash in it; each batch below takes one of the two ways, on every column.
  it('stores what a caller sent as it was sent: quotes, braces, commas, NULL, non-ASCII', async () => {
    const { records, counts, stored } = await roundTrip(
      [
        "quote \" and 'single'",
        '{braces},commas,"in" {"an":"array"}',
        'NULL',
        'null',
        '',
        ' spaced ',
        'é ü 中文 🎉 \u00a0 \u2028',
        'ends with a backslash \\',
        '\\\\"',
      ],
      'plain',
    );
    expect(counts).toEqual({ written: 9, dropped: 0 });
    expect(stored).toEqual(records);
  });

  it('stores as sent the texts JSON escapes otherwise: backslashes before a letter, tabs, line breaks', async () => {
    const { records, counts, stored } = await roundTrip(
      ['back\\slash \\n \\u0041 \\x00 $1', 'a\ttab', 'two\nlines\r\n', '\u007f\u0001', 'plain'],
      'escaped',
    );
    expect(counts).toEqual({ written: 5, dropped: 0 });
    expect(stored).toEqual(records);
  });

  // A column whose only escapes are control characters: nothing else (a quote, a backslash) sends
  // it to the driver, so the writer's own test for JSON's other escapes must. As an array literal,
  // PostgreSQL would read JSON's `\t` as `t`.
  it('stores as sent tabs, line breaks and control characters in a column without quotes or backslashes', async () => {
    const { records, counts, stored } = await roundTrip(
      ['a\ttab', 'two\nlines\r\n', '\u0001\u001f', 'plain'],
      'control',
    );
    expect(counts).toEqual({ written: 4, dropped: 0 });
    expect(stored).toEqual(records);
  });

  it('stores a lone surrogate as U+FFFD, and keeps the rest of its batch', async () => {
    const { records, counts, stored } = await roundTrip(['a\ud800b', 'é\udc00', '中\udc00', 'fine'], 'lone');
    expect(counts).toEqual({ written: 4, dropped: 0 });
    expect(stored.map((r) => r.toolId)).toEqual(['a\ufffdb', 'é\ufffd', '中\ufffd', 'fine']);
    expect(stored).toEqual(
      records.map((r) => ({ ...r, toolId: r.toolId?.toWellFormed(), userId: r.userId?.toWellFormed() })),
    );
  });

  // A successful call updates five of the seven indexes: the two by outcome hold failures only.
  it('indexes failed calls only by outcome', async () => {
    const indexes = await db.queryDirect<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'call_log' AND indexdef LIKE '%WHERE%' ORDER BY indexname`,
    );
    expect(indexes.map((i) => [i.indexname, /WHERE \(outcome <> 'ok'::text\)$/.test(i.indexdef)])).toEqual([
      ['call_log_client_id_outcome_at_id_idx', true],
      ['call_log_outcome_at_id_idx', true],
    ]);
  });
});
