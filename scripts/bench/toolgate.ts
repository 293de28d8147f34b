/** The real toolgate server under load: started from a bundle as `npm start` runs it. */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { children, freePort, log, ROOT, sleep, stopChild } from './processes.ts';

const TOOLGATE_START_MS = 120_000;

export interface Toolgate {
  url: string;
  pid: number;
  adminKey: string;
  /** Lines the server wrote (LOG_LEVEL=warn: warnings and errors only). */
  output: string[];
  child: ChildProcess;
  stop(): Promise<void>;
}

const TOOLGATE_VARIABLES = [
  'PORT',
  'HOST',
  'PUBLIC_URL',
  'DATABASE_URL',
  'TOOLGATE_ADMIN_KEY',
  'KMS',
  'LOCAL_KEK',
  'AZURE_KEY_VAULT_KEY_ID',
  'MAX_BODY_BYTES',
  'UPSTREAM_TIMEOUT_MS',
  'RATE_LIMIT_PER_KEY_PER_MIN',
  'LOG_LEVEL',
  'NODE_OPTIONS',
];

/** The real server, as `npm start` runs it, on a port of its own; ready when /healthz answers. */
/** `env` adds to or overrides the server's variables (servers sharing a database share LOCAL_KEK). */
export async function startToolgate(
  databaseUrl: string,
  cpuProfDir?: string,
  extraEnv: Record<string, string> = {},
): Promise<Toolgate> {
  const port = await freePort();
  const adminKey = `bench-admin-${randomBytes(24).toString('hex')}`;
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of TOOLGATE_VARIABLES) delete env[name];
  Object.assign(env, {
    // start.sh runs the `node` on PATH: the one running this bench comes first.
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    TOOLGATE_ADMIN_KEY: adminKey,
    LOCAL_KEK: randomBytes(32).toString('base64'),
    RATE_LIMIT_PER_KEY_PER_MIN: '0',
    LOG_LEVEL: 'warn',
    ...extraEnv,
  });
  const adminKeyUsed = env.TOOLGATE_ADMIN_KEY as string;
  const profiling = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [];
  // As `npm start` runs it (scripts/start.sh, which execs node: the pid is the server's), on the
  // bundle built once by main() before anything is measured.
  const child = spawn('sh', [path.join(ROOT, 'scripts/start.sh'), bundleDir, ...profiling], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of String(chunk).split('\n')) if (line.trim()) output.push(line);
    if (output.length > 200) output.splice(0, output.length - 200);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + TOOLGATE_START_MS;
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(
          `toolgate exited (${child.exitCode ?? child.signalCode}): ${output.slice(-5).join(' | ')}`,
        );
      if (Date.now() > deadline)
        throw new Error(`toolgate did not answer /healthz within ${TOOLGATE_START_MS} ms`);
      const ok = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) }).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      await sleep(100);
    }
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return {
    url,
    pid: child.pid as number,
    adminKey: adminKeyUsed,
    output,
    child,
    stop: () => stopChild(child),
  };
}

/**
 * toolgate runs as `npm start` does, from the bundle, built from the sources as they are now and
 * copied to a folder of this run (as deep as dist/server, so its relative paths still resolve):
 * a rebuild of dist/server by someone else during the run cannot pull chunks from under it.
 */
let bundleDir = path.join(ROOT, 'dist/server');

/** Runs an already built dist/server folder (`--bundle`) instead of building one. */
export function useBundle(dir: string): void {
  bundleDir = dir;
}

export function buildBundle(): void {
  const files = ['main.mjs', 'compile-worker.mjs'];
  for (let attempt = 1; ; attempt += 1) {
    log('building dist/server (scripts/build.mjs --bundle-only)');
    execFileSync(process.execPath, ['scripts/build.mjs', '--bundle-only'], { cwd: ROOT, stdio: 'inherit' });
    const copy = path.join(ROOT, 'dist', `bench-${process.pid}`);
    rmSync(copy, { recursive: true, force: true });
    try {
      cpSync(path.join(ROOT, 'dist/server'), copy, { recursive: true });
    } catch {}
    // Not a clean-up of `cleanups` (emptied after the benchmark, before the profile run): at exit.
    process.once('exit', () => rmSync(copy, { recursive: true, force: true }));
    if (files.every((f) => existsSync(path.join(copy, f)))) {
      bundleDir = copy;
      return;
    }
    if (attempt === 3) throw new Error('dist/server is incomplete after 3 builds (another build racing?)');
  }
}
