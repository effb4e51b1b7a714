import cluster, { Worker } from 'node:cluster';
import { AggregatorRegistry, PrometheusContentType, Registry } from 'prom-client';

/**
 * /metrics with WORKERS > 1 (docs/operations.md, "Metrics"): a scrape reaches one worker, whichever
 * the primary handed the connection to, and must show the whole process group. That worker asks the
 * primary; the primary's AggregatorRegistry (prom-client) collects every worker's registry over IPC and
 * merges them by each metric's `aggregator`: counters and histograms, and Agora's gauges (the pools),
 * are summed, the Redis gauge takes the smallest value (1 only when every worker is connected); the runtime and process metrics carry a `worker` label (Metrics), so they stay one series
 * per worker.
 */

const SCRAPE_REQUEST = 'agora:metrics-scrape';
const SCRAPE_RESPONSE = 'agora:metrics-scraped';
/** prom-client's primary gives up on a worker that does not answer after 5 s; a little more here. */
const SCRAPE_TIMEOUT_MS = 7_000;

interface ScrapeRequest {
  type: typeof SCRAPE_REQUEST;
  id: number;
}

interface ScrapeResponse {
  type: typeof SCRAPE_RESPONSE;
  id: number;
  metrics?: string;
  error?: string;
}

/**
 * The whole group's metrics cannot be had now (a worker or the primary did not answer in time, or the
 * aggregation failed): the scrape answers 503, never a partial sum. Prometheus retries at its next interval.
 */
export class ScrapeUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScrapeUnavailableError';
  }
}

const isMessage = <T extends { type: string }>(message: unknown, type: T['type']): message is T =>
  typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;

/** The primary's half: answers a worker's scrape with the aggregated metrics of all workers. */
export class MetricsAggregation {
  readonly name = 'metrics aggregation';
  private aggregator: AggregatorRegistry<PrometheusContentType> | undefined;

  private readonly answer = (worker: Worker, message: unknown): void => {
    if (!isMessage<ScrapeRequest>(message, SCRAPE_REQUEST) || !this.aggregator) return;
    const reply = (response: Omit<ScrapeResponse, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: SCRAPE_RESPONSE, id: message.id, ...response } satisfies ScrapeResponse);
    };
    this.aggregator.clusterMetrics().then(
      (metrics: string) => reply({ metrics }),
      (err: Error) => reply({ error: err.message }),
    );
  };

  start(): void {
    // Its constructor makes the primary listen for the workers' answers.
    this.aggregator = new AggregatorRegistry();
    cluster.on('message', this.answer);
  }

  stop(): void {
    cluster.off('message', this.answer);
  }
}

/**
 * The worker's half, or undefined outside a cluster worker: offers `registry` to the primary's
 * aggregation, and returns the scrape to answer with (the whole group's metrics, from the primary).
 */
export function aggregatedScrape(registry: Registry): (() => Promise<string>) | undefined {
  if (!cluster.isWorker) return undefined;
  AggregatorRegistry.setRegistries([registry]);
  // In a worker, constructing one is what makes prom-client answer the primary's requests.
  new AggregatorRegistry();
  const pending = new Map<number, { resolve: (metrics: string) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  let nextId = 0;
  process.on('message', (message: unknown) => {
    if (!isMessage<ScrapeResponse>(message, SCRAPE_RESPONSE)) return;
    const request = pending.get(message.id);
    if (!request) return;
    pending.delete(message.id);
    clearTimeout(request.timer);
    if (message.metrics !== undefined) request.resolve(message.metrics);
    else request.reject(new ScrapeUnavailableError(`Aggregating the workers' metrics failed: ${message.error ?? 'no answer'}`));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new ScrapeUnavailableError(`The primary did not answer a scrape within ${SCRAPE_TIMEOUT_MS} ms`));
      }, SCRAPE_TIMEOUT_MS);
      pending.set(id, { resolve, reject, timer });
      process.send!({ type: SCRAPE_REQUEST, id } satisfies ScrapeRequest);
    });
}
