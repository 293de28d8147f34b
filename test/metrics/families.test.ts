import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CounterFamily, HistogramFamily } from '../../server/metric-families.ts';

/**
 * The hot-path metric families (server/metric-families.ts) stand in for prom-client's Counter and
 * Histogram: fed the same observations, a registry renders them byte for byte as it renders
 * prom-client's own, in the text format and in JSON.
 */

const BOUNDS = [0.005, 0.01, 0.25, 1];
/** Under, on and between the bounds, above the last one, and labels that need escaping. */
const OBSERVATIONS: Array<[Record<'app' | 'tool', string>, number]> = [
  [{ app: 'pets', tool: 'getPet' }, 0.001],
  [{ app: 'pets', tool: 'getPet' }, 0.005],
  [{ app: 'pets', tool: 'getPet' }, 0.0050001],
  [{ app: 'pets', tool: 'getPet' }, 0.3],
  [{ app: 'pets', tool: 'listPets' }, 7.5],
  [{ app: 'pets', tool: 'getPet' }, 1],
  [{ app: 'we"ird\\app', tool: 'new\nline' }, 0.01],
];

function both() {
  const ours = new Registry();
  const theirs = new Registry();
  const histogram = new HistogramFamily<'app' | 'tool'>('t_seconds', 'Time per call', BOUNDS, ours);
  const counter = new CounterFamily<'app' | 'tool'>('t_calls_total', 'Calls', ours);
  const reference = {
    histogram: new Histogram({
      name: 't_seconds',
      help: 'Time per call',
      labelNames: ['app', 'tool'],
      buckets: BOUNDS,
      registers: [theirs],
    }),
    counter: new Counter({
      name: 't_calls_total',
      help: 'Calls',
      labelNames: ['app', 'tool'],
      registers: [theirs],
    }),
  };
  for (const [labels, value] of OBSERVATIONS) {
    const key = `${labels.app}\u0000${labels.tool}`;
    histogram.series(key, () => labels).observe(value);
    counter.series(key, () => labels).value += 1;
    reference.histogram.observe(labels, value);
    reference.counter.inc(labels);
  }
  return { ours, theirs, histogram, counter };
}

describe('hot-path metric families', () => {
  it('render as prom-client renders its Counter and Histogram', async () => {
    const { ours, theirs } = both();
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain('t_seconds_bucket{le="0.005",app="pets",tool="getPet"} 2');
    expect(text).toContain('t_seconds_bucket{le="+Inf",app="pets",tool="listPets"} 1');
    // The JSON form too, but for prom-client's empty exemplar slots (these families keep none).
    const withoutExemplars = (metrics: Awaited<ReturnType<Registry['getMetricsAsJSON']>>) =>
      metrics.map((metric) => ({
        ...metric,
        values: metric.values.map((value) => {
          const { exemplar: _, ...rest } = value as typeof value & { exemplar?: unknown };
          return rest;
        }),
      }));
    expect(await ours.getMetricsAsJSON()).toEqual(withoutExemplars(await theirs.getMetricsAsJSON()));
  });

  it('start again empty after a reset, as the registry resets its metrics', async () => {
    const { ours, theirs } = both();
    ours.resetMetrics();
    theirs.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).not.toContain('app="pets"');
  });
});
