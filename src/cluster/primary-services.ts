import { AppConfig, metricsServed } from '../config/config.schema.js';
import { MetricsAggregation } from '../metrics/cluster-metrics.js';
import type { PrimaryService } from './primary-service.js';

/**
 * The services the node:cluster primary runs for all its workers (see PrimaryService), started in this
 * order before the first fork. A limiter counted in the primary's memory joins the list the same way:
 * `{ name: 'rate limits', start: () => void new RateLimiterClusterMaster() }` (rate-limiter-flexible),
 * with its workers using `RateLimiterCluster`.
 */
export function primaryServices(config: AppConfig): PrimaryService[] {
  return [...(metricsServed(config) ? [new MetricsAggregation()] : [])];
}
