/**
 * `npm run bench` — throughput and latency of POST /proxyV2 against its ceilings, on loopback.
 *
 * Starts, each in its own process: a small upstream API (one GET operation, OpenAPI 3.1), a bare
 * pass-through proxy (node:http + undici, no checks; and the same over fetch), and the real
 * toolgate server (`node --import tsx server/main.ts`) on PGlite and, when reachable, on a fresh
 * PostgreSQL database. Loads each with autocannon from this process — (a) the upstream directly,
 * (b) through the bare proxy, (c) through /proxyV2 — and prints requests/s, p50/p99, the ratios
 * against the goal (c ≥ 70 % of b's requests/s, p50 at most 1 ms over b) and toolgate's peak RSS.
 *
 * Options: `npm run bench -- --help` (scripts/bench/options.ts).
 *
 * Everything listens on 127.0.0.1; every step has a time limit; every child is stopped at the end.
 * The parts are in scripts/bench/: options.ts, processes.ts (children and clean-ups), toolgate.ts
 * (the server under test), targets.ts, load.ts (one measurement), report.ts (tables), run.ts (the
 * benchmark and the profile run), startup.ts, and the helper processes upstream.ts and bare-proxy.ts.
 */
import path from 'node:path';
import { HELP, parseOptions } from './bench/options.ts';
import { abort, loadAverage, log, machine, ROOT, startHelper } from './bench/processes.ts';
import { benchmark, profileRun } from './bench/run.ts';
import { measureStartup, startupTable } from './bench/startup.ts';
import { buildBundle, useBundle } from './bench/toolgate.ts';

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2), process.env);
  if (options.help) {
    process.stdout.write(HELP);
    return 0;
  }
  for (const line of machine()) log(line);
  log(`load average at the start: ${loadAverage()}`);
  const budgetS =
    (options.profileOnly ? 1 : options.rounds * 9) * (6 * options.warmup + options.duration + 60) +
    (options.single && !options.profileOnly ? options.rounds * 9 * (2 + 5 + 30) : 0) +
    (options.profile ? options.warmup + options.duration + 120 : 0) +
    300;
  const watchdog = setTimeout(() => abort(`time limit of ${budgetS} s reached`, 1), budgetS * 1000);
  watchdog.unref();
  process.once('SIGINT', () => abort('SIGINT', 130));
  process.once('SIGTERM', () => abort('SIGTERM', 143));

  if (options.startups > 0 && !options.profileOnly) {
    const figures = await measureStartup(ROOT, {
      postgres: options.postgres,
      starts: options.startups,
      bundle: options.bundle ? path.resolve(options.bundle) : null,
      log,
    });
    process.stdout.write(`\n${startupTable(figures)}\n`);
    log(`load average after the start-up section: ${loadAverage()}`);
    if (options.startupOnly) return 0;
  }
  if (options.bundle) useBundle(path.resolve(options.bundle));
  else buildBundle();
  const upstream = await startHelper('upstream.ts', []);
  let ok = true;
  try {
    if (!options.profileOnly) ok = (await benchmark(options, upstream)) && ok;
    if (options.profile) ok = (await profileRun(options, upstream)) && ok;
  } finally {
    await upstream.stop();
    clearTimeout(watchdog);
  }
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
