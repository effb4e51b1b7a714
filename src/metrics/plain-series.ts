import type { Registry } from 'prom-client';

type Labels = Record<string, string | number>;

/** One metric as the registry reads it (prom-client's `get()` shape). */
interface MetricJson {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: { labels: Labels; value: number; metricName?: string }[];
}

/**
 * A counter or histogram whose label values are resolved once (per route, per operation) into a series
 * that a request updates with plain number arithmetic: no label object, no label validation, no hashing,
 * which prom-client's `labels(…).inc()` and `.observe()` do on every call, children included. The
 * registry reads them as it reads prom-client's own metrics (same JSON and text, same cluster
 * aggregation by sum).
 */
abstract class PlainMetric<S> {
  readonly aggregator = 'sum' as const;
  protected readonly series = new Map<string, { labels: Labels; series: S }>();

  constructor(
    readonly name: string,
    readonly help: string,
    protected readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The series of these label values (in labelNames' order), made on first use; keep it. */
  protected seriesOf(values: readonly string[], create: () => S): S {
    const key = values.join('\u0000');
    let entry = this.series.get(key);
    if (!entry) {
      const labels: Labels = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i]!));
      this.series.set(key, (entry = { labels, series: create() }));
    }
    return entry.series;
  }

  reset(): void {
    this.series.clear();
  }
}

export interface PlainCount {
  value: number;
}

export class PlainCounter extends PlainMetric<PlainCount> {
  readonly type = 'counter' as const;

  /** The series to increment (`series.value++`) for these label values. */
  child(...values: string[]): PlainCount {
    return this.seriesOf(values, () => ({ value: 0 }));
  }

  get(): Promise<MetricJson> {
    const values = [...this.series.values()].map(({ labels, series }) => ({ labels, value: series.value }));
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }
}

/** A histogram series: what one observation changes. */
export class PlainObservations {
  /** Observations per bucket (not cumulative); the last slot counts those above every bound. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

export class PlainHistogram extends PlainMetric<PlainObservations> {
  readonly type = 'histogram' as const;

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    super(name, help, labelNames, registry);
  }

  /** The series to observe for these label values. */
  child(...values: string[]): PlainObservations {
    return this.seriesOf(values, () => new PlainObservations(this.bounds));
  }

  /** As prom-client's Histogram gives it: cumulative buckets by `le`, `+Inf`, then `_sum` and `_count`, per series. */
  get(): Promise<MetricJson> {
    const values: MetricJson['values'] = [];
    for (const { labels, series } of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += series.counts[i]!;
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...labels }, value: series.count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: series.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }
}
