/**
 * `npm run bench:calls` — GET /admin/calls over a call log of a million records (issue 25's goal:
 * `?clientId=…&outcome=…` p99 ≤ 50 ms). Creates a fresh PostgreSQL database, migrates it through
 * the server's own start-up, fills `call_log` with `--records` rows in one INSERT … SELECT (50
 * clients, 1,000 users, 20 apps, 2 % of calls failing, 30 days), then asks the real server, over
 * HTTP on loopback, for first pages and cursor pages of each filter and prints p50/p99 per query.
 *
 * Options: --records=1000000 --queries=200 --postgres=postgresql://postgres@127.0.0.1:5432/postgres
 */
import { randomBytes } from 'node:crypto';
import { createApp } from '../../server/app.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { databaseUrl, withPg } from './postgres.ts';

const args = new Map(
  process.argv
    .slice(2)
    .filter((a) => a.startsWith('--'))
    .map((a) => a.slice(2).split('=') as [string, string]),
);
const RECORDS = Number(args.get('records') ?? 1_000_000);
const QUERIES = Number(args.get('queries') ?? 200);
const SERVER = args.get('postgres') ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

async function main() {
  const name = `toolgate_bench_calls_${process.pid}`;
  await withPg(SERVER, (c) => c.query(`CREATE DATABASE ${name}`));
  const adminKey = randomBytes(24).toString('hex');
  const loaded = loadConfig({
    PORT: '0',
    DATABASE_URL: databaseUrl(SERVER, name),
    TOOLGATE_ADMIN_KEY: adminKey,
    LOCAL_KEK: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
  });
  if (!loaded.ok) throw new Error(`${loaded.error.variable} ${loaded.error.problem}`);
  const app = await createApp(loaded.value, { logger: createLogger('warn') });
  try {
    const url = await app.listen();
    const started = performance.now();
    await app.deps.db.prisma.$executeRawUnsafe(`
      INSERT INTO call_log (at, duration_ms, surface, key_id, client_id, user_id, app_id, tool_id,
                            outcome, status, upstream_status, idempotent_replay, request_id)
      SELECT now() - (i * interval '30 days' / ${RECORDS}), 5 + i % 200, (ARRAY['rest','trpc','mcp'])[1 + i % 3],
             'key_' || (i % 50), 'cli_' || (i % 50), 'user_' || (i % 1000), 'app_' || (i % 20),
             'app_' || (i % 20) || ':::op_' || (i % 7),
             CASE WHEN i % 50 = 0 THEN 'upstream_error' WHEN i % 97 = 0 THEN 'invalid_parameters' ELSE 'ok' END,
             CASE WHEN i % 50 = 0 THEN 502 WHEN i % 97 = 0 THEN 400 ELSE 200 END,
             CASE WHEN i % 97 = 0 THEN NULL WHEN i % 50 = 0 THEN 503 ELSE 200 END,
             false, 'req_' || i
      FROM generate_series(1, ${RECORDS}) AS i`);
    await app.deps.db.prisma.$executeRawUnsafe('ANALYZE call_log');
    process.stdout.write(
      `${RECORDS} records written and analyzed in ${Math.round(performance.now() - started)} ms\n`,
    );

    const get = async (path: string) => {
      const t = performance.now();
      const response = await fetch(new URL(path, url), { headers: { authorization: `Bearer ${adminKey}` } });
      const body = (await response.json()) as { calls: unknown[]; next_cursor?: string };
      if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
      return { ms: performance.now() - t, body };
    };
    const cases: Array<[string, (i: number) => string]> = [
      ['clientId & outcome=ok', (i) => `/admin/calls?clientId=cli_${i % 50}&outcome=ok`],
      [
        'clientId & outcome=upstream_error',
        (i) => `/admin/calls?clientId=cli_${i % 50}&outcome=upstream_error`,
      ],
      ['clientId & userId', (i) => `/admin/calls?clientId=cli_${i % 50}&userId=user_${(i * 7) % 1000}`],
      ['outcome=invalid_parameters', () => '/admin/calls?outcome=invalid_parameters'],
      ['toolId', (i) => `/admin/calls?toolId=app_${i % 20}:::op_${i % 7}`],
      ['no filter', () => '/admin/calls'],
    ];
    for (let i = 0; i < 20; i += 1) await get(cases[0]?.[1](i) ?? '/admin/calls'); // warm
    process.stdout.write(
      '| query (100 per page) | first page p50 / p99 | next page p50 / p99 |\n| --- | --: | --: |\n',
    );
    for (const [label, pathOf] of cases) {
      const first: number[] = [];
      const next: number[] = [];
      for (let i = 0; i < QUERIES; i += 1) {
        const page = await get(pathOf(i));
        first.push(page.ms);
        if (page.body.next_cursor)
          next.push(
            (await get(`${pathOf(i)}${pathOf(i).includes('?') ? '&' : '?'}cursor=${page.body.next_cursor}`))
              .ms,
          );
      }
      first.sort((a, b) => a - b);
      next.sort((a, b) => a - b);
      const fmt = (s: number[]) => `${percentile(s, 50).toFixed(1)} / ${percentile(s, 99).toFixed(1)} ms`;
      process.stdout.write(`| ${label} | ${fmt(first)} | ${next.length > 0 ? fmt(next) : '—'} |\n`);
    }
  } finally {
    await app.close();
    await withPg(SERVER, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench:calls failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
