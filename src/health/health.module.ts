import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { AppConfig, metricsOnMainListener } from '../config/config.schema.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { ShutdownModule } from '../shutdown/shutdown.module.js';
import { HealthController } from './health.controller.js';
import { MetricsController } from './metrics.controller.js';
import { MigrationReadiness } from './migration-readiness.js';
import { PoolLiveness } from './pool-liveness.js';
import { DatabaseModule } from '../database/database.module.js';

/** The operators' routes on the main listener: the probes, and `/metrics` with METRICS_TOKEN and without METRICS_PORT. */
@Module({})
export class HealthModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: HealthModule,
      imports: [DatabaseModule, AuthModule, MetricsModule, ShutdownModule],
      controllers: [HealthController, ...(metricsOnMainListener(config) ? [MetricsController] : [])],
      providers: [PoolLiveness, MigrationReadiness],
    };
  }
}
