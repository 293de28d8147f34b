/**
 * Interleaved A/B of server builds: `npx tsx scripts/bench/ab.ts [options] VARIANT VARIANT…`
 *
 * The bench's figures move ±20 % from run to run on a shared VM, more than most single changes
 * gain; measured in turns within one run, two builds can be compared to a few per cent. Each
 * VARIANT is `name|bundle folder[|node flags and VAR=value settings, space-separated]`, e.g.
 *   'before|dist/before' 'after|dist/server' 'semi|dist/server|--max-semi-space-size=32'
 * A bundle folder is a copy of dist/server (`npm run build`, then `cp -r dist/server dist/before`:
 * as deep as dist/server, so its relative paths resolve). Every variant gets its own toolgate
 * (as `npm start` runs it, on a fresh PostgreSQL database, dropped at the end), the bench's app,
 * client and key; then each round loads every variant in turn (10 connections, 2 s warm-up, then
 * measured) and reads its CPU per call from /proc, and that of its database's PostgreSQL backends
 * (the same machine's; the server's figure does not hold them). Prints each round and the medians.
 *
 * Options: --rounds=3 --duration=8 --warmup=2 --target=proxy|mcp --postgres=postgresql://postgres@127.0.0.1:5432/postgres
 *   --rate=6000  a fixed rate of requests a second, the same for every variant (else all they answer)
 *   --server-cpus=0  run every server under `taskset -c 0`: with ab.ts (the load, the upstream)
 *            and PostgreSQL pinned to the other CPUs (`taskset -c 1 npx tsx scripts/bench/ab.ts …`,
 *            `taskset -a -p -c 1 <postmaster pid>` before the backends start), a server's CPU per
 *            call is its own work, not also the slowdown of sharing a core with the database
 *   --bare   also the bench's bare proxy (scripts/bench/bare-proxy.ts), loaded in turn like the
 *            others, and every median as a ratio to its median
 * Each round starts with the next variant in turn (no variant always runs first). Besides the
 * medians, it prints the median of each round's ratio to the first variant (the bare proxy with
 * --bare): the machine's speed drifts over minutes, and a ratio of neighbours in time cancels the
 * drift, so many short rounds (`--rounds=20 --duration=2 --warmup=0`) measure a ratio best.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { ITEM_ID, ITEM_PATH, mcpToolCall, OPERATION_ID, upstreamOpenApi } from './fixture.ts';
import { cpuMs } from './proc.ts';
import { median } from './stats.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TSX = import.meta.resolve('tsx');
const args = new Map(
  process.argv
    .slice(2)
    .filter((a) => a.startsWith('--'))
    .map((a) => a.slice(2).split('=') as [string, string]),
);
const specs = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const rounds = Number(args.get('rounds') ?? 3);
const duration = Number(args.get('duration') ?? 8);
const warmup = Number(args.get('warmup') ?? 2);
const target = args.get('target') ?? 'proxy';
const postgres = args.get('postgres') ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
/**
 * Requests a second in all (autocannon's overallRate), else as many as the server answers. CPU per
 * call depends on the rate (a busier event loop serves more calls per wake-up), so two variants
 * whose saturation rates differ compare fairly only at one rate below both.
 */
const rate = args.has('rate') ? Number(args.get('rate')) : undefined;
/** CPUs (taskset's list) the servers run on; run ab.ts itself and PostgreSQL on the others. */
const serverCpus = args.get('server-cpus');
if (specs.length === 0 || !['proxy', 'mcp'].includes(target)) {
  process.stderr.write(
    'usage: ab.ts [--rounds=3] [--duration=8] [--target=proxy|mcp] name|bundle[|flags] …\n',
  );
  process.exit(2);
}

const children: ChildProcess[] = [];
const databases: string[] = [];
async function withPg(fn: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client(postgres);
  await client.connect();
  try {
    await fn(client);
  } finally {
    await client.end();
  }
}
async function cleanUp(): Promise<void> {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(
    children.map((c) => new Promise((resolve) => c.exitCode !== null || c.once('exit', resolve))),
  );
  await withPg(async (client) => {
    for (const name of databases) await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}

interface Variant {
  name: string;
  pid: number;
  load: { url: string; headers: Record<string, string>; body: string };
  results: number[];
  /** Its PostgreSQL database (none for the bare proxy), and the CPU its backends took per call, a round each. */
  database?: string;
  databaseResults: number[];
  /** Each round's latency p99 (ms, autocannon's): a stall of the event loop shows here first. */
  p99s: number[];
}

async function start(spec: string, upstreamUrl: string): Promise<Variant> {
  const [name = '', bundle = '', settings = ''] = spec.split('|');
  const words = settings.split(' ').filter(Boolean);
  const flags = words.filter((w) => w.startsWith('-'));
  const env = Object.fromEntries(words.filter((w) => !w.startsWith('-')).map((w) => w.split('=', 2)));
  const database = `toolgate_ab_${randomBytes(6).toString('hex')}`;
  await withPg((client) => client.query(`CREATE DATABASE "${database}"`));
  databases.push(database);
  const port = 20_000 + Math.floor(Math.random() * 40_000);
  const admin = `ab-admin-${randomBytes(24).toString('hex')}`;
  const start = ['sh', path.join(ROOT, 'scripts/start.sh'), path.resolve(bundle), ...flags];
  const command = serverCpus ? ['taskset', '-c', serverCpus, ...start] : start;
  const child = spawn(command[0] as string, command.slice(1), {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: `${postgres.replace(/\/[^/]*$/, '')}/${database}`,
      TOOLGATE_ADMIN_KEY: admin,
      LOCAL_KEK: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_KEY_PER_MIN: '0',
      ...env,
    },
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i += 1) {
    if (child.exitCode !== null || i > 600) throw new Error(`${name}: toolgate did not start`);
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const adminCall = async (method: string, route: string, body: unknown) => {
    const reply = await fetch(`${url}${route}`, {
      method,
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await reply.json()) as Record<string, string>;
    if (!reply.ok) throw new Error(`${name}: ${method} ${route}: ${JSON.stringify(json)}`);
    return json;
  };
  const { clientId = '' } = await adminCall('POST', '/admin/clients', { name: 'ab' });
  const { apiKey = '' } = await adminCall('POST', `/admin/clients/${clientId}/api-keys`, {
    name: 'ab',
    scopes: ['tools:execute'],
  });
  await adminCall('PUT', '/admin/apps/bench', {
    provider: 'bench.local',
    baseUrl: upstreamUrl,
    openapi: upstreamOpenApi(upstreamUrl),
    auth: { type: 'none' },
  });
  const headers = {
    authorization: `Bearer ${apiKey}`,
    'x-service-client-id': clientId,
    'content-type': 'application/json',
  };
  const tool = `bench__${OPERATION_ID}`;
  const mcpCall = mcpToolCall(tool);
  const load =
    target === 'mcp'
      ? { url: `${url}/mcp`, headers: { ...headers, ...mcpCall.headers }, body: mcpCall.body }
      : {
          url: `${url}/proxyV2`,
          headers,
          body: JSON.stringify({ toolId: `bench:::${OPERATION_ID}`, parameters: { itemId: ITEM_ID } }),
        };
  const check = await fetch(load.url, { method: 'POST', headers: load.headers, body: load.body });
  if (check.status !== 200) throw new Error(`${name}: ${check.status} ${await check.text()}`);
  return { name, pid: child.pid as number, load, results: [], database, databaseResults: [], p99s: [] };
}

/**
 * CPU ms so far of each backend on the variant's database, by pid: the database's own work for
 * the server (the call log's INSERTs, above all), which /proc of the server does not show.
 */
async function backendsCpuMs(variant: Variant): Promise<Map<number, number>> {
  const cpu = new Map<number, number>();
  if (!variant.database) return cpu;
  await withPg(async (client) => {
    const { rows } = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = $1',
      [variant.database],
    );
    for (const { pid } of rows) {
      const ms = cpuMs(pid);
      if (ms !== null) cpu.set(pid, ms);
    }
  });
  return cpu;
}

function processCpuMs(variant: Variant): number {
  const ms = cpuMs(variant.pid);
  if (ms === null) throw new Error(`${variant.name}: its process is gone`);
  return ms;
}

const run = (variant: Variant, seconds: number) =>
  autocannon({
    ...variant.load,
    method: variant.load.body === '' ? 'GET' : 'POST',
    connections: 10,
    duration: seconds,
    ...(rate ? { overallRate: rate } : {}),
  });

/** The bench's bare pass-through proxy in front of the same upstream, as a variant. */
async function bare(upstreamUrl: string): Promise<Variant> {
  const child = fork(path.join(ROOT, 'scripts/bench/bare-proxy.ts'), [upstreamUrl, 'undici'], {
    execArgv: ['--import', TSX],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  const url = await new Promise<string>((resolve) =>
    child.once('message', (m: { url: string }) => resolve(m.url)),
  );
  const load = { url: `${url}${ITEM_PATH}`, headers: { accept: 'application/json' }, body: '' };
  return { name: 'bare', pid: child.pid as number, load, results: [], databaseResults: [], p99s: [] };
}

async function main(): Promise<void> {
  const upstream = fork(path.join(ROOT, 'scripts/bench/upstream.ts'), [], {
    execArgv: ['--import', TSX],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(upstream);
  const upstreamUrl = await new Promise<string>((resolve) =>
    upstream.once('message', (m: { url: string }) => resolve(m.url)),
  );
  const variants: Variant[] = args.has('bare') ? [await bare(upstreamUrl)] : [];
  for (const spec of specs) variants.push(await start(spec, upstreamUrl));
  for (const variant of variants) await run(variant, 4);
  for (let round = 1; round <= rounds; round += 1) {
    const turn = (round - 1) % variants.length;
    for (const variant of [...variants.slice(turn), ...variants.slice(0, turn)]) {
      if (warmup > 0) await run(variant, warmup);
      const backendsBefore = await backendsCpuMs(variant);
      const before = processCpuMs(variant);
      const result = await run(variant, duration);
      const us = ((processCpuMs(variant) - before) * 1000) / result.requests.total;
      let backendMs = 0;
      // A backend opened during the round counts from its start; one closed during it is lost.
      for (const [pid, ms] of await backendsCpuMs(variant)) backendMs += ms - (backendsBefore.get(pid) ?? 0);
      const databaseUs = (backendMs * 1000) / result.requests.total;
      if (result.non2xx || result.errors)
        throw new Error(`${variant.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      variant.results.push(us);
      variant.databaseResults.push(databaseUs);
      variant.p99s.push(result.latency.p99);
      const { p50, p99, max } = result.latency;
      console.log(
        `round ${round} ${variant.name.padEnd(12)} ${Math.round(result.requests.average)} req/s  ${us.toFixed(1)} µs/call  database ${databaseUs.toFixed(1)} µs/call  latency p50 ${p50} / p99 ${p99} / max ${max} ms  load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`,
      );
    }
  }
  const bareMedian = args.has('bare') ? median((variants[0] as Variant).results) : undefined;
  const reference = variants[0] as Variant;
  for (const { name, results, databaseResults, p99s } of variants) {
    const ratio = bareMedian ? `  ${(median(results) / bareMedian).toFixed(2)}× bare` : '';
    const paired = median(results.map((us, round) => us / (reference.results[round] as number)));
    console.log(
      `${name.padEnd(12)} median ${median(results).toFixed(1)} µs/call${ratio}  per-round ratio to ${reference.name} ${paired.toFixed(2)}×  (${results.map((r) => r.toFixed(0)).join(' ')})  database ${median(databaseResults).toFixed(1)} µs/call  latency p99 median ${median(p99s)} ms`,
    );
  }
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(cleanUp);
