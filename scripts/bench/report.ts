/** The bench's output: tables of the measurements, the goals and CPU budgets of issue 14, rounds folded. */
import type { Measurement } from './load.ts';
import { median } from './stats.ts';
import type { Target } from './targets.ts';

export const mb = (bytes: number | null) => (bytes === null ? '–' : `${(bytes / 2 ** 20).toFixed(0)} MB`);
export const fixed = (n: number | null, digits: number) =>
  n === null || Number.isNaN(n) ? '–' : n.toFixed(digits);

export function resultTable(results: Measurement[]): string {
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

export function goalTable(direct: Measurement, bare: Measurement, toolgates: Measurement[]): string {
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
export function cpuTable(
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

/** Rounds of one target folded into one row: medians of the figures, sums of the counts, the highest RSS. */
export function fold(runs: Measurement[]): Measurement & { rpsRange: [number, number] } {
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

export type Role = 'a' | 'b' | 'b-fetch' | 'c' | 'c-oauth' | 'c-mcp';

/** Issue 14's CPU budgets per call, as multiples of the bare proxy's (b) CPU per request. */
export const CPU_BUDGET: Partial<Record<Role, number>> = { c: 2, 'c-oauth': 3, 'c-mcp': 2.5 };
