import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { PlainCounter, PlainHistogram } from './plain-series.js';

const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const OBSERVED = [0, 0.001, 0.005, 0.0051, 0.01, 0.3, 1, 9.99, 10, 10.5, 400];

/** The same metrics as prom-client's own classes would give them, for the same updates. */
function both(): { plain: Registry; reference: Registry } {
  const plain = new Registry();
  const reference = new Registry();
  const counter = new PlainCounter('requests_total', 'Requests', ['method', 'route', 'status'], plain);
  const histogram = new PlainHistogram('duration_seconds', 'Durations', ['method', 'route'], BOUNDS, plain);
  const referenceCounter = new Counter({
    name: 'requests_total',
    help: 'Requests',
    labelNames: ['method', 'route', 'status'],
    registers: [reference],
  });
  const referenceHistogram = new Histogram({
    name: 'duration_seconds',
    help: 'Durations',
    labelNames: ['method', 'route'],
    buckets: BOUNDS,
    registers: [reference],
  });
  for (const [method, route] of [
    ['GET', '/healthz'],
    ['POST', '/graphql'],
  ] as const) {
    const series = histogram.child(method, route);
    for (const value of OBSERVED) {
      series.observe(value);
      referenceHistogram.labels(method, route).observe(value);
    }
    counter.child(method, route, '200').value += 3;
    referenceCounter.labels(method, route, '200').inc(3);
  }
  counter.child('GET', '/healthz', '503').value++;
  referenceCounter.labels('GET', '/healthz', '503').inc();
  return { plain, reference };
}

describe('PlainCounter and PlainHistogram', () => {
  it('scrape as prom-client counters and histograms do, bucket by bucket', async () => {
    const { plain, reference } = both();
    expect(await plain.metrics()).toBe(await reference.metrics());
  });

  it('aggregate across cluster workers as prom-client metrics do', async () => {
    const { plain, reference } = both();
    const twice = async (registry: Registry) =>
      AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), await registry.getMetricsAsJSON()]).metrics();
    expect(await twice(plain)).toBe(await twice(reference));
  });

  it('start over when reset', async () => {
    const { plain } = both();
    plain.resetMetrics();
    expect(await plain.metrics()).toBe(
      '# HELP requests_total Requests\n# TYPE requests_total counter\n\n# HELP duration_seconds Durations\n# TYPE duration_seconds histogram\n',
    );
  });
});
