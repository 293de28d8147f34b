/**
 * `npm run soak:audit` — the audit chain after mixed writes from two servers, for as long as asked
 * (issue 25: "verifies after a day of mixed writes from two servers; any altered row is named").
 *
 * Creates a fresh PostgreSQL database, starts two toolgate processes on it as `npm start` runs
 * them (the bundle built from the sources now, one LOCAL_KEK), and sends them concurrent
 * administrative writes (scripts/bench/audit-mix.ts: clients, redirect URIs, keys created and
 * revoked, apps registered and deleted; each write to either server) for `--duration` seconds, with
 * `GET /admin/audit/verify` asked meanwhile. Then: both servers must verify the whole chain with
 * one event per write; one event in the middle is altered in the database (the append-only
 * trigger off) and must be named; restored, the chain verifies again. Exit code 0 only if all held.
 *
 * Options: --duration=60 (seconds; 86400 for a day) --workers=8 --verify-every=200 (writes per
 * worker between verifications) --postgres=postgresql://postgres@127.0.0.1:5432/postgres --keep
 * (leave the database) --bundle=dist/server (run a built bundle instead of building one)
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { mixedAuditedWrites } from './audit-mix.ts';
import { databaseUrl, withPg } from './postgres.ts';
import { cleanups, loadAverage, log, machine, runCleanups } from './processes.ts';
import { buildBundle, startToolgate, type Toolgate, useBundle } from './toolgate.ts';

const args = new Map(
  process.argv
    .slice(2)
    .filter((a) => a.startsWith('--'))
    .map((a) => {
      const [name, value] = a.slice(2).split('=') as [string, string | undefined];
      return [name, value ?? 'true'] as const;
    }),
);
const DURATION_S = Number(args.get('duration') ?? 60);
const WORKERS = Number(args.get('workers') ?? 8);
const VERIFY_EVERY = Number(args.get('verify-every') ?? 200);
const SERVER = args.get('postgres') ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const KEEP = args.get('keep') === 'true';
/** A progress line this often. */
const PROGRESS_MS = 60_000;

async function verify(toolgate: Toolgate): Promise<{ ok: boolean; checked: number; firstBadId?: string }> {
  const response = await fetch(new URL('/admin/audit/verify', toolgate.url), {
    headers: { authorization: `Bearer ${toolgate.adminKey}` },
  });
  if (response.status !== 200) throw new Error(`verify on ${toolgate.url}: ${response.status}`);
  return (await response.json()) as { ok: boolean; checked: number; firstBadId?: string };
}

async function main(): Promise<boolean> {
  for (const line of machine()) log(line);
  const bundle = args.get('bundle');
  if (bundle) useBundle(path.resolve(bundle));
  else buildBundle();
  const name = `toolgate_soak_audit_${process.pid}`;
  await withPg(SERVER, (c) => c.query(`CREATE DATABASE ${name}`));
  if (!KEEP)
    cleanups.push(() =>
      withPg(SERVER, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(),
    );
  const url = databaseUrl(SERVER, name);
  const shared = { LOCAL_KEK: randomBytes(32).toString('base64') };
  // One after the other: the first migrates the new database.
  const first = await startToolgate(url, undefined, shared);
  cleanups.push(first.stop);
  const second = await startToolgate(url, undefined, shared);
  cleanups.push(second.stop);
  log(`two servers on ${name}: ${first.url} (pid ${first.pid}), ${second.url} (pid ${second.pid})`);

  const before = await verify(first);
  const stop = new AbortController();
  process.once('SIGINT', () => {
    log('SIGINT: stopping the writes, then verifying');
    stop.abort();
  });
  const started = Date.now();
  let lastLine = started;
  const mix = await mixedAuditedWrites(
    [first, second].map((t) => ({ url: t.url, adminKey: t.adminKey })),
    {
      durationMs: DURATION_S * 1000,
      workers: WORKERS,
      verifyEvery: VERIFY_EVERY,
      signal: stop.signal,
      onWrite: (progress) => {
        const now = Date.now();
        if (now - lastLine < PROGRESS_MS) return;
        lastLine = now;
        const s = (now - started) / 1000;
        log(
          `${Math.round(s)} s: ${progress.writes} writes (${(progress.writes / s).toFixed(1)}/s), ` +
            `${progress.verifications} verifications, load average ${loadAverage()}`,
        );
      },
    },
  );
  const seconds = (Date.now() - started) / 1000;
  const lines = [
    `${mix.writes} writes in ${seconds.toFixed(0)} s (${(mix.writes / seconds).toFixed(1)}/s) from ${WORKERS} workers to two servers; load average ${loadAverage()}`,
    `by action: ${JSON.stringify(mix.byAction)}`,
    `verifications during the writes: ${mix.verifications}, all ok: ${mix.failures.length === 0}`,
  ];
  let held = mix.failures.length === 0;
  for (const failure of mix.failures) lines.push(`FAILED: ${failure}`);

  const total = before.checked + mix.writes;
  for (const toolgate of [first, second]) {
    const t = performance.now();
    const result = await verify(toolgate);
    const good = result.ok && result.checked === total;
    held &&= good;
    lines.push(
      `verify on ${toolgate.url}: ${JSON.stringify(result)} in ${Math.round(performance.now() - t)} ms (expected ok, checked ${total})${good ? '' : ' FAILED'}`,
    );
  }

  const middle = before.checked + Math.max(1, Math.ceil(mix.writes / 2));
  await withPg(url, async (c) => {
    await c.query('ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only');
    try {
      await c.query(`UPDATE audit_events SET target = target || 'x' WHERE seq = ${middle}`);
      const altered = await verify(second);
      const named = !altered.ok && altered.firstBadId === String(middle);
      held &&= named;
      lines.push(
        `event ${middle} altered in the database: ${JSON.stringify(altered)}${named ? '' : ' FAILED'}`,
      );
      await c.query(`UPDATE audit_events SET target = left(target, -1) WHERE seq = ${middle}`);
    } finally {
      await c.query('ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only');
    }
  });
  const restored = await verify(first);
  held &&= restored.ok && restored.checked === total;
  lines.push(`restored: ${JSON.stringify(restored)}`);
  for (const toolgate of [first, second]) {
    const errors = toolgate.output.filter((line) => /"level":(50|60)/.test(line));
    if (errors.length > 0) lines.push(`${toolgate.url} logged ${errors.length} errors, e.g. ${errors[0]}`);
  }
  process.stdout.write(`${lines.join('\n')}\n${held ? 'HELD' : 'FAILED'}\n`);
  return held;
}

main().then(
  async (held) => {
    await runCleanups((error) => log(`clean-up failed: ${(error as Error).message}`));
    process.exit(held ? 0 : 1);
  },
  async (error: unknown) => {
    log(`failed: ${(error as Error).stack ?? String(error)}`);
    await runCleanups(() => {});
    process.exit(1);
  },
);
