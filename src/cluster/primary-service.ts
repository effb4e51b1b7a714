/**
 * Something that must run once for the whole process group, in the node:cluster primary, rather than
 * once per worker: it typically answers workers' messages (`cluster.on('message')`), as prom-client's
 * AggregatorRegistry does for /metrics, or as rate-limiter-flexible's `RateLimiterClusterMaster` does
 * for limits counted in the primary's memory.
 *
 * The primary starts every service of `primaryServices()` (primary-services.ts), in order, after the
 * database is prepared and before it forks the first worker, so a worker never sends to a primary not
 * yet listening; it stops them in reverse order after the last worker has exited. With WORKERS=1 there
 * is no primary and none of them runs.
 */
export interface PrimaryService {
  /** For the primary's log lines. */
  readonly name: string;
  start(): void | Promise<void>;
  stop?(): void | Promise<void>;
}
