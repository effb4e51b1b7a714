import { Global, Module } from '@nestjs/common';
import { RateLimitsResolver } from './rate-limits.resolver.js';
import { RateLimits } from './rate-limits.service.js';

/**
 * API rate limits: the budgets (`RateLimits`), global so that the guard and the transports that charge
 * them inject it without importing this module, and `Query.rateLimit`.
 */
@Global()
@Module({
  providers: [RateLimits, RateLimitsResolver],
  exports: [RateLimits],
})
export class RateLimitsModule {}
