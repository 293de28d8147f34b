/** One measurement: warm-up, then autocannon's load, with CPU, RSS and the target's counters around it. */
import autocannon, { type Instance } from 'autocannon';
import type { Options } from './options.ts';
import { cpuMs } from './proc.ts';
import { procStatus, withTimeout } from './processes.ts';
import { type Target, verify } from './targets.ts';

/** Calls of warm-up at least (within 5 warm-up periods) before a measurement. */
const WARM_CALLS = 5_000;

export interface Measurement {
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

export interface LoadShape {
  connections: number;
  duration: number;
  warmup: number;
}

/** The same load with one connection: latency without queueing. */
export function singleShape(options: Options): LoadShape {
  return { connections: 1, duration: Math.min(5, options.duration), warmup: Math.min(1, options.warmup) };
}

export async function measure(target: Target, options: LoadShape, upstreamPid: number): Promise<Measurement> {
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
