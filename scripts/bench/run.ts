/** The two runs of `npm run bench`: the benchmark (every target, interleaved rounds) and the CPU profile. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_COMPILER_LIMITS } from '../../server/catalog/compiler.ts';
import { ITEM_PATH, MCP_VERSION } from './fixture.ts';
import { type Measurement, measure, singleShape } from './load.ts';
import type { Options } from './options.ts';
import { databaseUrl, withPg } from './postgres.ts';
import {
  cleanups,
  type Helper,
  loadAverage,
  log,
  procStatus,
  runCleanups,
  sleep,
  startHelper,
} from './processes.ts';
import { formatSummary, readProfile, summarizeProfile } from './profile-summary.ts';
import { cpuTable, fold, goalTable, mb, type Role, resultTable } from './report.ts';
import { checkItem, mcpTarget, oauthTarget, proxyTarget, type Target } from './targets.ts';
import { startToolgate, type Toolgate } from './toolgate.ts';

export async function benchmark(options: Options, upstream: Helper): Promise<boolean> {
  const upstreamPid = upstream.child.pid as number;
  const notes: string[] = [];
  let failed = false;
  const targets: Array<{ target: Target; role: Role; toolgate?: Toolgate }> = [];
  const runs = new Map<Target, { loaded: Measurement[]; single: Measurement[] }>();

  try {
    // Everything is started first and stays up, idle while another target is loaded, so rounds can interleave.
    targets.push({
      role: 'a',
      target: {
        label: '(a) upstream direct',
        url: `${upstream.url}${ITEM_PATH}`,
        method: 'GET',
        headers: { accept: 'application/json' },
        check: checkItem,
      },
    });
    for (const mode of options.fetchProxy ? (['undici', 'fetch'] as const) : (['undici'] as const)) {
      const proxy = await startHelper('bare-proxy.ts', [upstream.url, mode]);
      cleanups.push(proxy.stop);
      targets.push({
        role: mode === 'undici' ? 'b' : 'b-fetch',
        target: {
          label: mode === 'undici' ? '(b) bare proxy, undici Pool' : "(b') bare proxy, global fetch",
          url: `${proxy.url}${ITEM_PATH}`,
          method: 'GET',
          headers: { accept: 'application/json' },
          check: checkItem,
          pid: proxy.child.pid as number,
        },
      });
    }

    const registered: Array<{ label: string; pid: number; at: number }> = [];
    const addToolgate = async (label: string, dbUrl: string) => {
      log(`starting toolgate on ${label}`);
      try {
        const toolgate = await startToolgate(dbUrl);
        cleanups.push(toolgate.stop);
        const target = await proxyTarget(toolgate, `(c) toolgate /proxyV2, ${label}`, upstream.url);
        const oauth = await oauthTarget(
          toolgate,
          `(c-oauth) /proxyV2 oauth2 warm grant, ${label}`,
          upstream.url,
          target,
        );
        const mcp = mcpTarget(`(c-mcp) /mcp tools/call ${MCP_VERSION}, ${label}`, target);
        // Idle: started, migrated, apps registered, not loaded yet (the compile worker still up).
        notes.push(
          `toolgate on ${label}: idle RSS ${mb(procStatus(toolgate.pid, 'VmRSS'))} (after start and registration, before any load)`,
        );
        registered.push({ label, pid: toolgate.pid, at: Date.now() });
        targets.push(
          { role: 'c', target, toolgate },
          { role: 'c-oauth', target: oauth },
          { role: 'c-mcp', target: mcp },
        );
      } catch (error) {
        failed = true;
        notes.push(`toolgate on ${label} failed to start: ${(error as Error).message}`);
      }
    };

    const tmp = mkdtempSync(path.join(os.tmpdir(), 'toolgate-bench-'));
    cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));
    await addToolgate('PGlite', `pglite:${path.join(tmp, 'pglite')}`);

    if (options.postgres) {
      const serverUrl = options.postgres;
      const name = `toolgate_bench_${randomBytes(6).toString('hex')}`;
      try {
        await withPg(serverUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
        cleanups.push(async () => {
          await withPg(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
        });
        await addToolgate('PostgreSQL', databaseUrl(serverUrl, name));
      } catch (error) {
        notes.push(`PostgreSQL skipped: cannot create a database (${(error as Error).message})`);
      }
    } else {
      notes.push('PostgreSQL skipped (--postgres=off)');
    }

    // Idle for good: the compile worker stops after its idle time, and what it leaves is what an
    // idle server keeps (issue 14's budget). Read once, after the last registration's idle time.
    const last = Math.max(0, ...registered.map((r) => r.at));
    if (registered.length > 0) {
      log('waiting for the compile workers to stop (idle RSS)');
      await sleep(Math.max(0, last + DEFAULT_COMPILER_LIMITS.idleMs + 5_000 - Date.now()));
      for (const { label, pid } of registered) {
        notes.push(
          `toolgate on ${label}: idle RSS ${mb(procStatus(pid, 'VmRSS'))} (${(DEFAULT_COMPILER_LIMITS.idleMs + 5_000) / 1000} s after the last registration: the compile worker stopped)`,
        );
      }
    }

    for (let round = 1; round <= options.rounds; round += 1) {
      const tag = options.rounds > 1 ? `round ${round}/${options.rounds}: ` : '';
      for (const { target } of targets) {
        const done = runs.get(target) ?? { loaded: [], single: [] };
        runs.set(target, done);
        try {
          log(`${tag}measuring ${target.label}`);
          done.loaded.push(await measure(target, options, upstreamPid));
          if (options.single) {
            log(`${tag}measuring ${target.label} with 1 connection`);
            done.single.push(await measure(target, singleShape(options), upstreamPid));
          }
        } catch (error) {
          failed = true;
          notes.push(`${tag}${target.label} failed: ${(error as Error).message}`);
        }
      }
    }
    for (const { toolgate, target } of targets) {
      const lines = toolgate?.output.length ?? 0;
      if (lines > 0)
        notes.push(`${target.label} wrote ${lines} log line(s); last: ${toolgate?.output.at(-1)}`);
    }
  } finally {
    await runCleanups((error) => notes.push(`clean-up failed: ${(error as Error).message}`));
  }

  const folded = (role: Role, which: 'loaded' | 'single') =>
    targets
      .filter((t) => t.role === role)
      .map((t) => runs.get(t.target)?.[which] ?? [])
      .filter((list) => list.length > 0)
      .map(fold);
  const all = (which: 'loaded' | 'single') =>
    (['a', 'b', 'b-fetch', 'c', 'c-oauth', 'c-mcp'] as const).flatMap((role) => folded(role, which));

  const loaded = all('loaded');
  const singles = all('single');
  const out: string[] = [
    '',
    `connections ${options.connections}, ${options.duration} s measured after ${options.warmup} s warm-up per target, ${options.rounds} round(s); toolgate with LOG_LEVEL=warn, RATE_LIMIT_PER_KEY_PER_MIN=0`,
    `load average at the end: ${loadAverage()}`,
    '',
    resultTable(loaded),
    '',
  ];
  if (options.rounds > 1) {
    out.push(
      `req/s range over the rounds: ${loaded.map((m) => `${m.label.replace(/ \(median.*$/, '')} ${m.rpsRange[0].toFixed(0)}–${m.rpsRange[1].toFixed(0)}`).join('; ')}`,
      '',
    );
  }
  const [a] = folded('a', 'loaded');
  const [b] = folded('b', 'loaded');
  const cs = folded('c', 'loaded');
  if (a && b && cs.length > 0) out.push(goalTable(a, b, cs), '');
  if (b) out.push(cpuTable(b, loaded, targets), '');
  if (singles.length > 0) {
    out.push('1 connection (latency without queueing):', '', resultTable(singles), '');
    const [b1] = folded('b', 'single');
    for (const c of b1 ? folded('c', 'single') : []) {
      const delta = c.p50 - (b1 as Measurement).p50;
      out.push(
        `${c.label}, 1 connection: p50 (c)−(b) ${delta >= 0 ? '+' : ''}${delta.toFixed(2)} ms (goal ≤ 1 ms: ${delta <= 1 ? 'met' : 'missed'})`,
      );
    }
    out.push('');
  }
  const bad = [...loaded, ...singles].filter((r) => r.non2xx > 0 || r.errors > 0);
  if (bad.length > 0) {
    failed = true;
    out.push(`non-2xx answers or errors during: ${bad.map((r) => r.label).join(', ')}`, '');
  }
  for (const note of notes) out.push(`note: ${note}`);
  process.stdout.write(`${out.join('\n')}\n`);
  return !failed;
}

export async function profileRun(options: Options, upstream: Helper): Promise<boolean> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'toolgate-bench-'));
  const profDir = mkdtempSync(path.join(os.tmpdir(), 'toolgate-cpuprofile-'));
  let window: Measurement['window'] | undefined;
  cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));
  try {
    log('starting toolgate on PGlite under --cpu-prof');
    const toolgate = await startToolgate(`pglite:${path.join(tmp, 'pglite')}`, profDir);
    // SIGTERM: main.ts closes and exits, and V8 writes the profile on exit.
    cleanups.push(toolgate.stop);
    const proxy = await proxyTarget(toolgate, '(c) toolgate /proxyV2, PGlite, --cpu-prof', upstream.url);
    const target =
      options.profileTarget === 'c-mcp'
        ? mcpTarget(`(c-mcp) /mcp tools/call ${MCP_VERSION}, PGlite, --cpu-prof`, proxy)
        : options.profileTarget === 'c-oauth'
          ? await oauthTarget(
              toolgate,
              '(c-oauth) oauth2 warm grant, PGlite, --cpu-prof',
              upstream.url,
              proxy,
            )
          : proxy;
    log(`measuring ${target.label}`);
    const m = await measure(target, options, upstream.child.pid as number);
    window = m.window;
    process.stdout.write(
      `\n${resultTable([m])}\n(profiling slows the server; these figures are not the benchmark)\n`,
    );
  } finally {
    await runCleanups((error) => log(`clean-up failed: ${(error as Error).message}`));
  }
  // One file per thread; the main thread's is by far the largest.
  const files = readdirSync(profDir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(profDir, f))
    .sort((x, y) => statSync(y).size - statSync(x).size);
  if (files.length === 0) {
    log(`no .cpuprofile written in ${profDir}`);
    return false;
  }
  const file = files[0] as string;
  const summary = summarizeProfile(readProfile(file), 25, window);
  process.stdout.write(`\nprofile ${file}\n${summary.note ?? ''}\n${formatSummary(summary)}\n`);
  return true;
}
