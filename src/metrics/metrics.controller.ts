import { Controller, Get, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OwnAuthentication } from '../auth/public.decorator.js';
import { Metrics } from './metrics.js';
import { SCRAPE_REFUSED, ScrapeAccess } from './scrape-access.js';

/**
 * `GET /metrics` on the main listener, registered only with METRICS_TOKEN and without METRICS_PORT.
 * The route checks the scrape token itself: the API guard must not read it as an API token.
 */
@Controller('metrics')
@OwnAuthentication()
export class MetricsController {
  constructor(
    private readonly metrics: Metrics,
    private readonly access: ScrapeAccess,
  ) {}

  @Get()
  async scrape(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    if (!this.access.allows(req.headers.authorization)) {
      void reply.status(SCRAPE_REFUSED.status).headers(SCRAPE_REFUSED.headers);
      return SCRAPE_REFUSED.body;
    }
    void reply.header('content-type', this.metrics.contentType).header('cache-control', 'no-store');
    return this.metrics.scrape();
  }
}
