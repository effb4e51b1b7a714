import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig, metricsOnMainListener } from '../config/config.schema.js';
import { HttpMetrics } from './http-metrics.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsListener } from './metrics-listener.js';
import { Metrics } from './metrics.js';
import { ScrapeAccess } from './scrape-access.js';

/**
 * Prometheus metrics: the `Metrics` registry every feature records into (global, so features inject it
 * without importing this module), the HTTP hook, and `/metrics` on the main listener (METRICS_TOKEN) or
 * on a listener of its own (METRICS_PORT). With neither, nothing serves them.
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: MetricsModule,
      providers: [Metrics, HttpMetrics, ScrapeAccess, MetricsListener],
      controllers: metricsOnMainListener(config) ? [MetricsController] : [],
      exports: [Metrics, HttpMetrics, MetricsListener],
    };
  }
}
