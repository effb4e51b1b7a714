import { Module } from '@nestjs/common';
import { HttpMetrics } from './http-metrics.js';
import { MetricsListener } from './metrics-listener.js';
import { Metrics } from './metrics.js';
import { ScrapeAccess } from './scrape-access.js';
import { DatabaseModule } from '../database/database.module.js';

/**
 * Prometheus metrics: the `Metrics` registry features record into, the HTTP hook, and who may scrape. `/metrics` is served on a listener of
 * its own (METRICS_PORT, `MetricsListener`) or on the main one (METRICS_TOKEN: HealthModule's
 * `MetricsController`). With neither, nothing serves them.
 */
@Module({
  imports: [DatabaseModule],
  providers: [Metrics, HttpMetrics, ScrapeAccess, MetricsListener],
  exports: [Metrics, HttpMetrics, ScrapeAccess, MetricsListener],
})
export class MetricsModule {}
