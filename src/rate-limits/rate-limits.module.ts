import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module.js';
import { RateLimits } from './rate-limits.service.js';

/** API rate limits: the budgets (`RateLimits`) the guard and the transports charge. `Query.rateLimit` is GraphqlModule's. */
@Module({
  imports: [MetricsModule],
  providers: [RateLimits],
  exports: [RateLimits],
})
export class RateLimitsModule {}
