import type { Metric, Registry } from 'prom-client';

/**
 * Counter and histogram families for the series every request touches. prom-client's own metrics
 * check and hash the label object on every `inc` and `observe` (their `labels()` children too):
 * the four updates of a tool call cost about 10 µs of its 120 µs in the bench (an A/B without
 * them), where these cost a Map look-up and a few additions. They render through the same
 * registry, in the same text format as prom-client's (a test holds the two to each other), and
 * everything off the hot path stays plain prom-client.
 */

type Labels<N extends string> = Readonly<Record<N, string>>;

interface Rendered {
  value: number;
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  metricName?: string;
}

abstract class Family<N extends string, S> {
  readonly aggregator = 'sum';
  abstract readonly type: 'counter' | 'histogram';
  readonly #series = new Map<string, { labels: Labels<N>; data: S }>();

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    // The registry reads name, help, type, aggregator and getForPromString() of what it is given.
    registry.registerMetric(this as unknown as Metric);
  }

  /**
   * The series of these labels. `key` names them uniquely (the caller builds it from the values it
   * already holds); `labels` is called once, when the series is new.
   */
  series(key: string, labels: () => Labels<N>): S {
    let series = this.#series.get(key);
    if (series === undefined) {
      series = { labels: labels(), data: this.create() };
      this.#series.set(key, series);
    }
    return series.data;
  }

  protected abstract create(): S;
  protected abstract render(labels: Labels<N>, data: S): Rendered[];

  reset(): void {
    this.#series.clear();
  }

  /** What prom-client's Registry renders (its own metrics answer the same shape). */
  async getForPromString() {
    const values: Rendered[] = [];
    for (const { labels, data } of this.#series.values()) values.push(...this.render(labels, data));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** The JSON form (Registry.getMetricsAsJSON): every label on the value itself. */
  async get() {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ labels, sharedLabels, ...rest }) => ({
        ...rest,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }
}

export interface CounterSeries {
  value: number;
}

export class CounterFamily<N extends string> extends Family<N, CounterSeries> {
  readonly type = 'counter';

  protected create(): CounterSeries {
    return { value: 0 };
  }

  protected render(labels: Labels<N>, data: CounterSeries): Rendered[] {
    return [{ value: data.value, labels: { ...labels } }];
  }
}

export class HistogramSeries {
  /** Observations per bucket (not cumulative); above the last bound they count only in `count`. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    const { bounds } = this;
    for (let i = 0; i < bounds.length; i += 1) {
      if (value <= (bounds[i] as number)) {
        this.counts[i] = (this.counts[i] as number) + 1;
        break;
      }
    }
    this.sum += value;
    this.count += 1;
  }
}

export class HistogramFamily<N extends string> extends Family<N, HistogramSeries> {
  readonly type = 'histogram';

  constructor(
    name: string,
    help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    super(name, help, registry);
  }

  protected create(): HistogramSeries {
    return new HistogramSeries(this.bounds);
  }

  protected render(labels: Labels<N>, data: HistogramSeries): Rendered[] {
    // As prom-client writes a histogram: `le` first, the series' labels after it.
    const bucket = `${this.name}_bucket`;
    const values: Rendered[] = [];
    let cumulative = 0;
    this.bounds.forEach((le, i) => {
      cumulative += data.counts[i] as number;
      values.push({ value: cumulative, labels: { le }, sharedLabels: labels, metricName: bucket });
    });
    values.push(
      { value: data.count, labels: { le: '+Inf' }, sharedLabels: labels, metricName: bucket },
      { value: data.sum, labels: {}, sharedLabels: labels, metricName: `${this.name}_sum` },
      { value: data.count, labels: {}, sharedLabels: labels, metricName: `${this.name}_count` },
    );
    return values;
  }
}
