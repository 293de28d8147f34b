/**
 * The start-up section of `npm run bench`: how long the server takes from `node` starting to its
 * `toolgate: listening on …` line, as `npm start` runs it (the bundle in dist/server, rebuilt here
 * from the sources without touching the generated client), on an existing PGlite folder and on
 * an existing PostgreSQL database; the first start (database created and migrated, admin key
 * hashed) and the development command (`npm run dev`, tsx) for comparison.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadAverage } from './processes.ts';

export interface StartupFigure {
  label: string;
  /** Ready times in ms, one per start. */
  readyMs: number[];
  /** CPU (user + system) the process had used when ready, per start: steadier on a busy machine. */
  cpuMs: number[];
}

/** CPU time of a process so far, from /proc (Linux; clock ticks of 10 ms). */
function cpuMsOf(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

const START_LIMIT_MS = 120_000;

/** One start: spawn, wait for the listening line, SIGTERM, wait for the exit. Answers ms to ready and CPU ms. */
async function timeStart(
  root: string,
  [command, ...args]: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ ready: number; cpu: number }> {
  const started = performance.now();
  const child = spawn(command as string, args, { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    return await new Promise<{ ready: number; cpu: number }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no listening line in time')), START_LIMIT_MS);
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
        if (stderr.includes('toolgate: listening on')) {
          clearTimeout(timer);
          resolve({ ready: performance.now() - started, cpu: cpuMsOf(child.pid) });
        }
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`exited ${code} before listening: ${stderr.trim()}`));
      });
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

export async function measureStartup(
  root: string,
  options: {
    postgres: string | null;
    starts: number;
    /** A built dist/server folder to start instead of building one (A/B runs). */
    bundle: string | null;
    log: (line: string) => void;
  },
): Promise<StartupFigure[]> {
  if (!options.bundle) {
    execFileSync(process.execPath, ['scripts/build.mjs', '--bundle-only'], { cwd: root, stdio: 'ignore' });
  }
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'toolgate-bench-startup-'));
  const env = (databaseUrl: string): NodeJS.ProcessEnv => ({
    // start.sh runs the `node` on PATH: the one running this bench comes first.
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
    HOME: process.env.HOME,
    PORT: '0',
    DATABASE_URL: databaseUrl,
    LOCAL_KEK: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
  });
  // `npm start` is scripts/start.sh, which execs node (the pid measured is the server's).
  const built = ['sh', 'scripts/start.sh', options.bundle ?? 'dist/server'];
  const dev = [process.execPath, '--import', 'tsx', 'server/main.ts'];
  const figures: StartupFigure[] = [];
  const series = async (label: string, args: string[], databaseUrl: string, starts: number) => {
    // The machine may be shared: the load beside each series says how much of the wall time was
    // waiting for a core (CPU per start is the steadier figure).
    options.log(`start-up: ${label} (load average ${loadAverage()})`);
    const e = env(databaseUrl);
    const figure: StartupFigure = { label, readyMs: [], cpuMs: [] };
    for (let i = 0; i < starts; i++) {
      const { ready, cpu } = await timeStart(root, args, e);
      figure.readyMs.push(ready);
      figure.cpuMs.push(cpu);
    }
    figures.push(figure);
  };
  try {
    const folder = `pglite:${path.join(tmp, 'db')}`;
    await series('PGlite, first start (creates, migrates, makes the admin key)', built, folder, 1);
    await series('PGlite, existing folder (npm start)', built, folder, options.starts);
    await series('PGlite, existing folder (npm run dev, tsx)', dev, folder, options.starts);
    if (options.postgres) {
      const name = `toolgate_bench_startup_${process.pid}`;
      const admin = new pg.Client({ connectionString: options.postgres });
      try {
        await admin.connect();
        await admin.query(`CREATE DATABASE ${name}`);
      } catch (error) {
        options.log(`start-up: PostgreSQL skipped (${(error as Error).message})`);
        await admin.end().catch(() => {});
        return figures;
      }
      try {
        const url = new URL(options.postgres);
        url.pathname = `/${name}`;
        await series('PostgreSQL, first start (migrates, makes the admin key)', built, url.href, 1);
        await series('PostgreSQL, existing database (npm start)', built, url.href, options.starts);
      } finally {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
        await admin.end();
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return figures;
}

export function startupTable(figures: StartupFigure[]): string {
  const median = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] as number;
  const rows = figures.map((f) => [
    f.label,
    `${Math.round(median(f.readyMs))} ms`,
    `${Math.round(Math.min(...f.readyMs))}–${Math.round(Math.max(...f.readyMs))} ms`,
    `${Math.round(median(f.cpuMs))} ms`,
    String(f.readyMs.length),
  ]);
  const header = ['start-up: spawn → "listening on"', 'median', 'range', 'CPU (median)', 'starts'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
