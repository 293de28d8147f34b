/**
 * The call log's write cost per record, in CPU time (issue 25): `npx tsx scripts/bench/call-log-write.ts`
 *
 * Feeds `--records` records to the server's own writer (server/observe/call-log.ts, batches of
 * LIMITS.callLogBatch, or --batch) and reads the CPU time they took: this process's (process.cpuUsage: the
 * writer, the driver's parameter encoding, the socket; on PGlite the embedded database too) and,
 * on PostgreSQL, the database backend's that wrote them (/proc of its pid, same machine). CPU
 * time, unlike wall time, moves little with the machine's load. Each round empties the table
 * first, so every round writes into the same size of table and indexes.
 *
 * Options: --db=postgres|pglite --records=50000 --rounds=5 --batch=<records per INSERT, default the server's>
 *   --postgres=postgresql://postgres@127.0.0.1:5432/postgres (a fresh database is created and dropped)
 */
import { randomBytes, randomUUID } from 'node:crypto';
import pino from 'pino';
import { LIMITS } from '../../server/config.ts';
import { type Database, openDatabase } from '../../server/db/database.ts';
import { CallLog, type CallRecord } from '../../server/observe/call-log.ts';
import { databaseUrl, withPg } from './postgres.ts';
import { cpuMs } from './proc.ts';
import { median } from './stats.ts';

const args = new Map(
  process.argv
    .slice(2)
    .filter((a) => a.startsWith('--'))
    .map((a) => a.slice(2).split('=') as [string, string]),
);
const KIND = args.get('db') ?? 'postgres';
const RECORDS = Number(args.get('records') ?? 50_000);
const ROUNDS = Number(args.get('rounds') ?? 5);
const SERVER = args.get('postgres') ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const BATCH = Number(args.get('batch') ?? LIMITS.callLogBatch);
if (!['postgres', 'pglite'].includes(KIND)) {
  process.stderr.write('usage: call-log-write.ts [--db=postgres|pglite] [--records=50000] [--rounds=5]\n');
  process.exit(2);
}

/** Records as the bench's /proxyV2 load makes them: one key, one tool, each its own request id. */
function records(): CallRecord[] {
  const keyId = `key_${randomBytes(10).toString('hex')}`;
  const clientId = `cli_${randomBytes(10).toString('hex')}`;
  const now = Date.now();
  return Array.from({ length: RECORDS }, (_, i) => ({
    at: now - RECORDS + i,
    durationMs: 3,
    surface: 'rest',
    keyId,
    clientId,
    userId: null,
    appId: 'bench',
    toolId: 'bench:::getItem',
    outcome: 'ok',
    status: 200,
    upstreamStatus: 200,
    idempotentReplay: false,
    requestId: randomUUID(),
  }));
}

/** CPU ms so far of each backend of the bench's database (PostgreSQL), by pid. */
async function backendsCpu(name: string | undefined): Promise<Map<number, number>> {
  const cpu = new Map<number, number>();
  if (name === undefined) return cpu;
  const { rows } = await withPg(SERVER, (c) =>
    c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [name]),
  );
  for (const { pid } of rows) {
    const ms = cpuMs(pid);
    if (ms !== null) cpu.set(pid, ms);
  }
  return cpu;
}

/** CPU µs per record of one round: this process, and the database's backends (PostgreSQL). */
async function round(db: Database, name: string | undefined) {
  await db.queryDirect('TRUNCATE call_log');
  const batch = records();
  const counts = { written: 0, dropped: 0 };
  // Each INSERT timed: on PGlite it runs on this thread and holds the event loop for its length.
  const insertMs: number[] = [];
  const timed: Pick<Database, 'queryDirect'> = {
    queryDirect: async (...query: Parameters<Database['queryDirect']>) => {
      const started = performance.now();
      try {
        return await db.queryDirect(...query);
      } finally {
        insertMs.push(performance.now() - started);
      }
    },
  };
  const log = new CallLog(
    timed,
    { enabled: true, flushMs: LIMITS.callLogFlushMs, batch: BATCH, maxBuffered: RECORDS },
    { written: (n) => (counts.written += n), dropped: (n) => (counts.dropped += n) },
    pino({ level: 'silent' }),
  );
  const backendsBefore = await backendsCpu(name);
  const before = process.cpuUsage();
  const started = performance.now();
  for (const record of batch) log.record(record);
  await log.flush();
  const own = process.cpuUsage(before);
  const wallMs = performance.now() - started;
  let backend = 0;
  // A backend that came or went meanwhile would count wrongly: the writer keeps one connection.
  for (const [pid, ms] of await backendsCpu(name)) backend += ms - (backendsBefore.get(pid) ?? Number.NaN);
  if (counts.written !== RECORDS) throw new Error(`written ${counts.written}, dropped ${counts.dropped}`);
  return {
    user: own.user / RECORDS,
    system: own.system / RECORDS,
    backend: (backend * 1000) / RECORDS,
    wall: (wallMs * 1000) / RECORDS,
    insertMs: median(insertMs),
  };
}

async function main() {
  let url = 'pglite:memory';
  let name: string | undefined;
  if (KIND === 'postgres') {
    name = `toolgate_bench_log_write_${process.pid}`;
    await withPg(SERVER, (c) => c.query(`CREATE DATABASE ${name}`));
    url = databaseUrl(SERVER, name);
  }
  const db = await openDatabase(url);
  try {
    const results: Awaited<ReturnType<typeof round>>[] = [];
    for (let i = 1; i <= ROUNDS; i += 1) {
      const r = await round(db, name);
      results.push(r);
      console.log(
        `round ${i}: this process ${(r.user + r.system).toFixed(2)} µs/record (user ${r.user.toFixed(2)}, system ${r.system.toFixed(2)})` +
          `${KIND === 'postgres' ? `, database backend ${r.backend.toFixed(2)}` : ''}, wall ${r.wall.toFixed(2)}, an INSERT ${r.insertMs.toFixed(1)} ms (median)`,
      );
    }
    const m = (pick: (r: Awaited<ReturnType<typeof round>>) => number) =>
      median(results.map(pick)).toFixed(2);
    console.log(
      `${KIND}, ${RECORDS} records a round, batches of ${BATCH}: median this process ${m((r) => r.user + r.system)} µs/record` +
        `${KIND === 'postgres' ? `, database backend ${m((r) => r.backend)} µs/record` : ''}, an INSERT ${m((r) => r.insertMs)} ms`,
    );
  } finally {
    await db.close();
    if (name) await withPg(SERVER, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
