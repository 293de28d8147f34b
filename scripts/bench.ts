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
 * Options (argv `--name=value`, or the environment variable in brackets):
 *   --connections=10   [BENCH_CONNECTIONS]  concurrent connections of every load
 *   --duration=10      [BENCH_DURATION]     seconds measured per target
 *   --warmup=3         [BENCH_WARMUP]       seconds of unmeasured load before each measurement
 *   --postgres=URL     [BENCH_POSTGRES_URL] server to create the bench database on
 *                      (default postgresql://postgres@127.0.0.1:5432/postgres; `off` skips it)
 *   --rounds=1         [BENCH_ROUNDS]       measure every target this many times, interleaved, and
 *                                           report medians (steadier on a shared machine)
 *   --no-fetch-proxy                        skip the bare proxy over fetch (b')
 *   --no-single                             skip the second pass with 1 connection (latency without
 *                                           queueing: at most 5 s measured, 1 s warm-up)
 *   --profile          [BENCH_PROFILE=1]    afterwards, load toolgate (PGlite) under `node --cpu-prof`
 *                                           and summarize where its CPU goes
 *   --profile-only                          only the profile run (with the upstream)
 *   --profile-target=c [BENCH_PROFILE_TARGET] what the profile run loads: c (/proxyV2, auth none),
 *                                           c-oauth (warm grant) or c-mcp (/mcp tools/call)
 *   --startups=5       [BENCH_STARTUPS]     start-up section: starts measured per case (0 skips it)
 *   --startup-only                          only the start-up section (scripts/bench/startup.ts)
 *   --bundle=DIR       [BENCH_BUNDLE]       run this built dist/server folder instead of building one
 *
 * Everything listens on 127.0.0.1; every step has a time limit; every child is stopped at the end.
 */
import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type Instance } from 'autocannon';
import pg from 'pg';
import { DEFAULT_COMPILER_LIMITS } from '../server/catalog/compiler.ts';
import {
  EXPECTED_BODY,
  ITEM_ID,
  ITEM_PATH,
  MCP_VERSION,
  mcpToolCall,
  OPERATION_ID,
  upstreamOpenApi,
} from './bench/fixture.ts';
import { cpuMs } from './bench/proc.ts';
import { formatSummary, readProfile, summarizeProfile } from './bench/profile-summary.ts';
import { measureStartup, startupTable } from './bench/startup.ts';
import { median } from './bench/stats.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TSX = import.meta.resolve('tsx');
const APP_ID = 'bench';
/** The same upstream as an oauth2 app, with a grant seeded through a real initiate → callback. */
const OAUTH_APP_ID = 'bench-oauth';
const OAUTH_USER = 'bench-user';
const CHILD_START_MS = 30_000;
const TOOLGATE_START_MS = 120_000;
const STOP_MS = 10_000;
const HTTP_MS = 15_000;
/** Calls of warm-up at least (within 5 warm-up periods) before a measurement. */
const WARM_CALLS = 5_000;

// ---------------------------------------------------------------------------------------------
// Options

interface Options {
  connections: number;
  duration: number;
  warmup: number;
  postgres: string | null;
  fetchProxy: boolean;
  single: boolean;
  rounds: number;
  profile: boolean;
  profileOnly: boolean;
  profileTarget: 'c' | 'c-oauth' | 'c-mcp';
  startups: number;
  startupOnly: boolean;
  /** A built dist/server folder to run instead of building one (A/B runs against another build). */
  bundle: string | null;
}

function parseOptions(argv: string[], env: NodeJS.ProcessEnv): Options {
  const args = new Map<string, string>();
  for (const arg of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new Error(`unknown argument ${arg}`);
    args.set(m[1] as string, m[2] ?? 'true');
  }
  const known = [
    'connections',
    'duration',
    'warmup',
    'postgres',
    'no-fetch-proxy',
    'no-single',
    'rounds',
    'profile',
    'profile-only',
    'profile-target',
    'startups',
    'startup-only',
    'bundle',
  ];
  for (const name of args.keys()) if (!known.includes(name)) throw new Error(`unknown option --${name}`);
  const num = (name: string, envName: string, fallback: number, min: number, max: number) => {
    const raw = args.get(name) ?? env[envName];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max)
      throw new Error(`--${name} must be a number from ${min} to ${max}`);
    return value;
  };
  const postgres =
    args.get('postgres') ?? env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const profileOnly = args.has('profile-only');
  return {
    connections: Math.round(num('connections', 'BENCH_CONNECTIONS', 10, 1, 1000)),
    duration: num('duration', 'BENCH_DURATION', 10, 1, 600),
    warmup: num('warmup', 'BENCH_WARMUP', 3, 0, 120),
    postgres: postgres === 'off' ? null : postgres,
    fetchProxy: !args.has('no-fetch-proxy'),
    single: !args.has('no-single'),
    rounds: Math.round(num('rounds', 'BENCH_ROUNDS', 1, 1, 20)),
    profile: profileOnly || args.has('profile') || env.BENCH_PROFILE === '1',
    profileOnly,
    profileTarget: profileTargetOf(args.get('profile-target') ?? env.BENCH_PROFILE_TARGET ?? 'c'),
    startups: Math.round(num('startups', 'BENCH_STARTUPS', 5, 0, 50)),
    startupOnly: args.has('startup-only'),
    bundle: args.get('bundle') ?? env.BENCH_BUNDLE ?? null,
  };
}

// ---------------------------------------------------------------------------------------------
// Small helpers

function withTimeout<T>(promise: PromiseLike<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    Promise.resolve(promise).finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

function freePort(): Promise<number> {
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

function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(', ');
}

function machine(): string[] {
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

// ---------------------------------------------------------------------------------------------
// Child processes: every one is tracked and stopped, whatever happens.

const children = new Set<ChildProcess>();

/** Pending clean-ups (stop a server, drop a database, remove a folder), run last-in first-out. */
const cleanups: Array<() => Promise<void>> = [];

async function runCleanups(onError: (error: unknown) => void): Promise<void> {
  for (let cleanup = cleanups.pop(); cleanup; cleanup = cleanups.pop()) await cleanup().catch(onError);
}

/** Time limit or signal: clean up what can be cleaned up within 20 s, then leave. */
function abort(reason: string, code: number): void {
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

async function stopChild(
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

interface Helper {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Forks one of scripts/bench/*.ts; it answers `{ ready, url }` over IPC once listening. */
async function startHelper(file: string, args: string[]): Promise<Helper> {
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

interface Toolgate {
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
async function startToolgate(databaseUrl: string, cpuProfDir?: string): Promise<Toolgate> {
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
  });
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
  return { url, pid: child.pid as number, adminKey, output, child, stop: () => stopChild(child) };
}

/**
 * toolgate runs as `npm start` does, from the bundle, built from the sources as they are now and
 * copied to a folder of this run (as deep as dist/server, so its relative paths still resolve):
 * a rebuild of dist/server by someone else during the run cannot pull chunks from under it.
 */
let bundleDir = path.join(ROOT, 'dist/server');
function buildBundle(): void {
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

// ---------------------------------------------------------------------------------------------
// Targets: what autocannon sends, and what a correct answer looks like.

interface Target {
  label: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Null when the answer is right, else what is wrong. */
  check(status: number, text: string): string | null;
  /** The process that does the proxying (CPU and RSS are sampled), if any. */
  pid?: number;
  /** Counters read just before and after the measured load (database statements, KMS calls). */
  counters?: () => Promise<Record<string, number>>;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function checkItem(status: number, text: string): string | null {
  if (status !== 200) return `status ${status}: ${text.slice(0, 200)}`;
  try {
    return sameJson(JSON.parse(text), EXPECTED_BODY) ? null : `unexpected body ${text.slice(0, 200)}`;
  } catch {
    return `body is not JSON: ${text.slice(0, 200)}`;
  }
}

function checkEnvelope(status: number, text: string, toolId = `${APP_ID}:::${OPERATION_ID}`): string | null {
  if (status !== 200) return `status ${status}: ${text.slice(0, 300)}`;
  try {
    const body = JSON.parse(text) as { ok?: unknown; data?: unknown; meta?: { tool_id?: unknown } };
    if (body.ok !== true) return `ok is not true: ${text.slice(0, 300)}`;
    if (!sameJson(body.data, EXPECTED_BODY)) return `unexpected data: ${text.slice(0, 300)}`;
    if (body.meta?.tool_id !== toolId) return `unexpected meta: ${text.slice(0, 300)}`;
    return null;
  } catch {
    return `body is not JSON: ${text.slice(0, 300)}`;
  }
}

async function verify(target: Target): Promise<void> {
  for (let i = 0; i < 3; i += 1) {
    const response = await fetch(target.url, {
      method: target.method,
      headers: target.headers,
      body: target.body,
      signal: AbortSignal.timeout(HTTP_MS),
    });
    const problem = target.check(response.status, await response.text());
    if (problem) throw new Error(`${target.label} does not answer as expected: ${problem}`);
  }
}

async function adminCall(
  toolgate: Toolgate,
  method: string,
  route: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${toolgate.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${toolgate.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(HTTP_MS),
  });
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(`${method} ${route}: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** A client, an API key (tools:execute) and the app (auth none) through the admin REST routes. */
async function proxyTarget(toolgate: Toolgate, label: string, upstreamUrl: string): Promise<Target> {
  const client = await adminCall(toolgate, 'POST', '/admin/clients', { name: 'bench' });
  const clientId = String(client.clientId);
  const key = await adminCall(toolgate, 'POST', `/admin/clients/${encodeURIComponent(clientId)}/api-keys`, {
    name: 'bench',
    scopes: ['tools:execute', 'oauth:initiate'],
  });
  const app = await adminCall(toolgate, 'PUT', `/admin/apps/${APP_ID}`, {
    provider: 'bench.local',
    baseUrl: upstreamUrl,
    openapi: upstreamOpenApi(upstreamUrl),
    auth: { type: 'none' },
  });
  if (!Array.isArray(app.tools) || !app.tools.includes(OPERATION_ID))
    throw new Error(`app registration did not yield the tool ${OPERATION_ID}: ${JSON.stringify(app)}`);
  return {
    label,
    url: `${toolgate.url}/proxyV2`,
    method: 'POST',
    headers: {
      authorization: `Bearer ${String(key.apiKey)}`,
      'x-service-client-id': clientId,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ toolId: `${APP_ID}:::${OPERATION_ID}`, parameters: { itemId: ITEM_ID } }),
    check: (status, text) => checkEnvelope(status, text),
    pid: toolgate.pid,
    counters: () => toolgateCounters(toolgate),
  };
}

/** toolgate's own counters from /metrics: statements sent to the database, KMS calls. */
async function toolgateCounters(toolgate: Toolgate): Promise<Record<string, number>> {
  const response = await fetch(`${toolgate.url}/metrics`, { signal: AbortSignal.timeout(HTTP_MS) });
  const text = await response.text();
  const sum = (name: string) =>
    [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
  return { 'db queries': sum('toolgate_db_queries_total'), 'KMS calls': sum('toolgate_kms_calls_total') };
}

/**
 * The same tool as an oauth2 app whose grant is warm and valid: the app's token endpoint is the
 * upstream's `POST /token`; a real `POST /initiateOAuth` then `GET /handleOAuthCallback` (what the
 * provider's redirect would do) stores a sealed grant valid for a day. Calls carry X-Service-User-Id.
 */
async function oauthTarget(
  toolgate: Toolgate,
  label: string,
  upstreamUrl: string,
  base: Target,
): Promise<Target> {
  const clientId = base.headers['x-service-client-id'] as string;
  const redirect = 'http://127.0.0.1/bench-authorized';
  await adminCall(toolgate, 'POST', `/admin/clients/${encodeURIComponent(clientId)}/redirect-uris`, {
    uri: redirect,
  });
  const app = await adminCall(toolgate, 'PUT', `/admin/apps/${OAUTH_APP_ID}`, {
    provider: 'bench.local',
    baseUrl: upstreamUrl,
    openapi: upstreamOpenApi(upstreamUrl),
    auth: {
      type: 'oauth2',
      authorizationUrl: `${upstreamUrl}/authorize`,
      tokenUrl: `${upstreamUrl}/token`,
      clientId: 'bench-client',
      clientSecret: 'bench-secret',
      scopes: ['items:read'],
    },
  });
  if (!Array.isArray(app.tools) || !app.tools.includes(OPERATION_ID))
    throw new Error(`oauth2 app registration did not yield ${OPERATION_ID}: ${JSON.stringify(app)}`);
  const initiated = await fetch(`${toolgate.url}/initiateOAuth`, {
    method: 'POST',
    headers: base.headers,
    body: JSON.stringify({ appId: OAUTH_APP_ID, userId: OAUTH_USER, clientRedirectUri: redirect }),
    signal: AbortSignal.timeout(HTTP_MS),
  });
  const initiateText = await initiated.text();
  if (initiated.status !== 200) throw new Error(`initiateOAuth: ${initiated.status} ${initiateText}`);
  const { state } = JSON.parse(initiateText) as { state: string };
  const callback = await fetch(
    `${toolgate.url}/handleOAuthCallback?code=bench-code&state=${encodeURIComponent(state)}`,
    { redirect: 'manual', signal: AbortSignal.timeout(HTTP_MS) },
  );
  await callback.text();
  const location = callback.headers.get('location') ?? '';
  if (callback.status !== 302 || !location.startsWith(redirect) || location.includes('error='))
    throw new Error(`OAuth callback: ${callback.status} to ${location}`);
  const toolId = `${OAUTH_APP_ID}:::${OPERATION_ID}`;
  return {
    ...base,
    label,
    headers: { ...base.headers, 'x-service-user-id': OAUTH_USER },
    body: JSON.stringify({ toolId, parameters: { itemId: ITEM_ID } }),
    check: (status, text) => checkEnvelope(status, text, toolId),
  };
}

/**
 * The auth-none tool over MCP (2026-07-28, stateless): one JSON-RPC `tools/call` POST per call,
 * with the headers and `_meta` the official v2 client sends.
 */
function mcpTarget(label: string, base: Target): Target {
  const call = mcpToolCall(`${APP_ID}__${OPERATION_ID}`);
  return {
    ...base,
    label,
    url: base.url.replace(/\/proxyV2$/, '/mcp'),
    headers: { ...base.headers, ...call.headers },
    body: call.body,
    check: checkMcp,
  };
}

function checkMcp(status: number, text: string): string | null {
  if (status !== 200) return `status ${status}: ${text.slice(0, 300)}`;
  try {
    const body = JSON.parse(text) as { result?: { isError?: boolean; structuredContent?: unknown } };
    if (!body.result || body.result.isError) return `not a tool result: ${text.slice(0, 300)}`;
    if (!text.includes(ITEM_ID)) return `the item is missing: ${text.slice(0, 300)}`;
    return null;
  } catch {
    return `body is not JSON: ${text.slice(0, 300)}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Load

interface Measurement {
  label: string;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
  /** CPU of the proxying process per answered request, µs. */
  proxyCpuUs: number | null;
  upstreamCpuUs: number | null;
  /** VmRSS of the proxying process just before the warm-up. */
  idleRss: number | null;
  maxRss: number | null;
  peakRss: number | null;
  /** CLOCK_MONOTONIC of the measured window, µs (matches V8 profile timestamps). */
  window: { fromUs: number; toUs: number };
  /** How much each of the target's counters grew during the measured load. */
  counts?: Record<string, number>;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

async function runLoad(
  target: Target,
  seconds: number,
  connections: number,
  onLatency?: (ms: number) => void,
): Promise<{ duration: number; non2xx: number; errors: number; requests: number }> {
  const instance: Instance = autocannon({
    url: target.url,
    method: target.method,
    headers: target.headers,
    body: target.body,
    connections,
    duration: seconds,
    timeout: 10,
  });
  if (onLatency) {
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status >= 200 && status < 300) onLatency(ms);
    });
  }
  try {
    const result = await withTimeout(instance, (seconds + 30) * 1000, `load on ${target.label}`);
    return {
      duration: result.duration,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
      requests: result.requests.total,
    };
  } catch (error) {
    instance.stop();
    throw error;
  }
}

interface LoadShape {
  connections: number;
  duration: number;
  warmup: number;
}

/** The same load with one connection: latency without queueing. */
function singleShape(options: Options): LoadShape {
  return { connections: 1, duration: Math.min(5, options.duration), warmup: Math.min(1, options.warmup) };
}

async function measure(target: Target, options: LoadShape, upstreamPid: number): Promise<Measurement> {
  await verify(target);
  const idleRss = target.pid === undefined ? null : procStatus(target.pid, 'VmRSS');
  if (options.warmup > 0) {
    // On a loaded machine a few seconds may be a few hundred calls, too few for the JIT: the
    // first target measured on a fresh server would pay for it. Warm up to WARM_CALLS (bounded).
    let warmed = 0;
    for (let i = 0; i < 5 && warmed < WARM_CALLS; i += 1)
      warmed += (await runLoad(target, options.warmup, options.connections)).requests;
  }
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  const record = (ms: number) => {
    if (count === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[count++] = ms;
  };
  let maxRss: number | null = null;
  const sampler = setInterval(() => {
    if (target.pid === undefined) return;
    const rss = procStatus(target.pid, 'VmRSS');
    if (rss !== null) maxRss = Math.max(maxRss ?? 0, rss);
  }, 250);
  const counters0 = await target.counters?.();
  const proxyCpu0 = target.pid === undefined ? null : cpuMs(target.pid);
  const upstreamCpu0 = cpuMs(upstreamPid);
  const fromUs = Number(process.hrtime.bigint() / 1000n);
  let run: Awaited<ReturnType<typeof runLoad>>;
  try {
    run = await runLoad(target, options.duration, options.connections, record);
  } finally {
    clearInterval(sampler);
  }
  const toUs = Number(process.hrtime.bigint() / 1000n);
  const proxyCpu1 = target.pid === undefined ? null : cpuMs(target.pid);
  const upstreamCpu1 = cpuMs(upstreamPid);
  const counters1 = await target.counters?.();
  const counts =
    counters0 && counters1
      ? Object.fromEntries(Object.keys(counters1).map((k) => [k, (counters1[k] ?? 0) - (counters0[k] ?? 0)]))
      : undefined;
  // A target that answered right before the run must still answer right after it.
  await verify(target);
  const sorted = latencies.slice(0, count).sort();
  const perRequest = (a: number | null, b: number | null) =>
    a === null || b === null || count === 0 ? null : ((b - a) * 1000) / count;
  return {
    label: target.label,
    rps: count / run.duration,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    ok: count,
    non2xx: run.non2xx,
    errors: run.errors,
    proxyCpuUs: perRequest(proxyCpu0, proxyCpu1),
    upstreamCpuUs: perRequest(upstreamCpu0, upstreamCpu1),
    idleRss,
    maxRss,
    peakRss: target.pid === undefined ? null : procStatus(target.pid, 'VmHWM'),
    window: { fromUs, toUs },
    ...(counts ? { counts } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Databases

async function withPg<T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: serverUrl,
    connectionTimeoutMillis: 5_000,
    query_timeout: 30_000,
  });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

// ---------------------------------------------------------------------------------------------
// Output

const mb = (bytes: number | null) => (bytes === null ? '–' : `${(bytes / 2 ** 20).toFixed(0)} MB`);
const fixed = (n: number | null, digits: number) => (n === null || Number.isNaN(n) ? '–' : n.toFixed(digits));

function resultTable(results: Measurement[]): string {
  const lines = [
    '| target | req/s | p50 ms | p90 ms | p99 ms | 2xx | non-2xx | errors | proxy CPU µs/req | upstream CPU µs/req | proxy RSS max / peak |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of results) {
    lines.push(
      `| ${r.label} | ${r.rps.toFixed(0)} | ${fixed(r.p50, 2)} | ${fixed(r.p90, 2)} | ${fixed(r.p99, 2)} | ${r.ok} | ${r.non2xx} | ${r.errors} | ${fixed(r.proxyCpuUs, 0)} | ${fixed(r.upstreamCpuUs, 0)} | ${r.maxRss === null ? '–' : `${mb(r.maxRss)} / ${mb(r.peakRss)}`} |`,
    );
  }
  return lines.join('\n');
}

function goalTable(direct: Measurement, bare: Measurement, toolgates: Measurement[]): string {
  const lines = [
    '| toolgate run | (c)/(b) req/s | goal ≥ 0.70 | (c)/(a) req/s | p50 (c)−(b) ms | goal ≤ 1 ms | RSS before load / max under load / peak (VmHWM) |',
    '|---|--:|:-:|--:|--:|:-:|--:|',
  ];
  for (const c of toolgates) {
    const ratioB = c.rps / bare.rps;
    const delta = c.p50 - bare.p50;
    lines.push(
      `| ${c.label} | ${ratioB.toFixed(2)} | ${ratioB >= 0.7 ? 'met' : 'missed'} | ${(c.rps / direct.rps).toFixed(2)} | ${delta >= 0 ? '+' : ''}${delta.toFixed(2)} | ${delta <= 1 ? 'met' : 'missed'} | ${mb(c.idleRss)} / ${mb(c.maxRss)} / ${mb(c.peakRss)} |`,
    );
  }
  return lines.join('\n');
}

/** CPU per call against the bare proxy's, with the issue's budget, and the counters of each run. */
function cpuTable(
  bare: Measurement,
  loaded: Measurement[],
  targets: Array<{ target: Target; role: Role }>,
): string {
  const lines = [
    `| toolgate target | CPU µs/call | ratio to (b) ${fixed(bare.proxyCpuUs, 0)} µs | budget | counted during the measured load |`,
    '|---|--:|--:|:-:|---|',
  ];
  for (const m of loaded) {
    const role = targets.find((t) => m.label.startsWith(t.target.label))?.role;
    const budget = role ? CPU_BUDGET[role] : undefined;
    if (budget === undefined) continue;
    const ratio = m.proxyCpuUs !== null && bare.proxyCpuUs ? m.proxyCpuUs / bare.proxyCpuUs : Number.NaN;
    const counts = m.counts
      ? `${Object.entries(m.counts)
          .map(([k, v]) => `${v} ${k}`)
          .join(', ')} in ${m.ok} calls`
      : '–';
    lines.push(
      `| ${m.label} | ${fixed(m.proxyCpuUs, 0)} | ${fixed(ratio, 2)}× | ≤ ${budget}×: ${ratio <= budget ? 'met' : 'missed'} | ${counts} |`,
    );
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Main

/** Rounds of one target folded into one row: medians of the figures, sums of the counts, the highest RSS. */
function fold(runs: Measurement[]): Measurement & { rpsRange: [number, number] } {
  const first = runs[0] as Measurement;
  const pick = (f: (m: Measurement) => number | null) => {
    const values = runs.map(f).filter((v): v is number => v !== null);
    return values.length === 0 ? null : median(values);
  };
  const max = (f: (m: Measurement) => number | null) => {
    const values = runs.map(f).filter((v): v is number => v !== null);
    return values.length === 0 ? null : Math.max(...values);
  };
  const rps = runs.map((m) => m.rps);
  return {
    label: runs.length > 1 ? `${first.label} (median of ${runs.length})` : first.label,
    rps: median(rps),
    rpsRange: [Math.min(...rps), Math.max(...rps)],
    p50: median(runs.map((m) => m.p50)),
    p90: median(runs.map((m) => m.p90)),
    p99: median(runs.map((m) => m.p99)),
    ok: runs.reduce((n, m) => n + m.ok, 0),
    non2xx: runs.reduce((n, m) => n + m.non2xx, 0),
    errors: runs.reduce((n, m) => n + m.errors, 0),
    proxyCpuUs: pick((m) => m.proxyCpuUs),
    upstreamCpuUs: pick((m) => m.upstreamCpuUs),
    idleRss: pick((m) => m.idleRss),
    maxRss: max((m) => m.maxRss),
    peakRss: max((m) => m.peakRss),
    window: first.window,
    ...(first.counts
      ? {
          counts: Object.fromEntries(
            Object.keys(first.counts).map((k) => [k, runs.reduce((n, m) => n + (m.counts?.[k] ?? 0), 0)]),
          ),
        }
      : {}),
  };
}

type Role = 'a' | 'b' | 'b-fetch' | 'c' | 'c-oauth' | 'c-mcp';

/** Issue 14's CPU budgets per call, as multiples of the bare proxy's (b) CPU per request. */
const CPU_BUDGET: Partial<Record<Role, number>> = { c: 2, 'c-oauth': 3, 'c-mcp': 2.5 };

async function benchmark(options: Options, upstream: Helper): Promise<boolean> {
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

function profileTargetOf(value: string): Options['profileTarget'] {
  if (value === 'c' || value === 'c-oauth' || value === 'c-mcp') return value;
  throw new Error(`--profile-target must be c, c-oauth or c-mcp, not ${value}`);
}

async function profileRun(options: Options, upstream: Helper): Promise<boolean> {
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

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2), process.env);
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
    if (options.startupOnly) return 0;
  }
  if (options.bundle) bundleDir = path.resolve(options.bundle);
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
