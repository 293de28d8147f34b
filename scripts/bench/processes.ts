/**
 * The bench's small helpers and its child processes: every child is tracked and stopped, whatever
 * happens (a time limit, a signal, a failure), and clean-ups run last-in first-out.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TSX = import.meta.resolve('tsx');
const CHILD_START_MS = 30_000;
const STOP_MS = 10_000;

export function withTimeout<T>(promise: PromiseLike<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    Promise.resolve(promise).finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export function loadAverage(): string {
  return os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(', ');
}

export function machine(): string[] {
  const cpuinfo = (() => {
    try {
      return readFileSync('/proc/cpuinfo', 'utf8');
    } catch {
      return '';
    }
  })();
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
  return [
    `nproc ${os.availableParallelism()}, CPU ${model}, memory ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `Node ${process.version}, ${os.type()} ${os.release()}`,
  ];
}

export const children = new Set<ChildProcess>();

/** Pending clean-ups (stop a server, drop a database, remove a folder), run last-in first-out. */
export const cleanups: Array<() => Promise<void>> = [];

export async function runCleanups(onError: (error: unknown) => void): Promise<void> {
  for (let cleanup = cleanups.pop(); cleanup; cleanup = cleanups.pop()) await cleanup().catch(onError);
}

/** Time limit or signal: clean up what can be cleaned up within 20 s, then leave. */
export function abort(reason: string, code: number): void {
  log(`${reason}; stopping everything`);
  withTimeout(
    runCleanups(() => {}),
    20_000,
    'clean-up',
  ).finally(() => process.exit(code));
}

process.on('exit', () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function stopChild(
  child: ChildProcess,
  graceful: () => void = () => child.kill('SIGTERM'),
): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    graceful();
    try {
      await withTimeout(exited(child), STOP_MS, `stopping pid ${child.pid}`);
    } catch {
      child.kill('SIGKILL');
      await withTimeout(exited(child), 5_000, `killing pid ${child.pid}`).catch(() => {});
    }
  }
  children.delete(child);
}

export interface Helper {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Forks one of scripts/bench/*.ts; it answers `{ ready, url }` over IPC once listening. */
export async function startHelper(file: string, args: string[]): Promise<Helper> {
  const child = fork(path.join(ROOT, 'scripts/bench', file), args, {
    cwd: ROOT,
    execArgv: ['--import', TSX],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  const url = await withTimeout(
    new Promise<string>((resolve, reject) => {
      child.once('message', (message: { ready?: boolean; url?: string }) => {
        if (message?.ready && message.url) resolve(message.url);
        else reject(new Error(`${file}: unexpected message`));
      });
      child.once('exit', (code) => reject(new Error(`${file} exited with ${code} before listening`)));
    }),
    CHILD_START_MS,
    `starting ${file}`,
  ).catch(async (error: unknown) => {
    await stopChild(child);
    throw error;
  });
  return {
    url,
    child,
    stop: () =>
      stopChild(child, () => {
        if (child.connected) child.send('stop');
        else child.kill('SIGTERM');
      }),
  };
}
