import { Controller, Get, Logger, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OwnAuthentication } from '../auth/public.decorator.js';
import { ScrapeUnavailableError } from '../metrics/cluster-metrics.js';
import { Metrics } from '../metrics/metrics.js';
import { SCRAPE_REFUSED, SCRAPE_UNAVAILABLE, ScrapeAccess } from '../metrics/scrape-access.js';

/**
 * `GET /metrics` on the main listener, registered only with METRICS_TOKEN and without METRICS_PORT.
 * The route checks the scrape token itself: the API guard must not read it as an API token.
 */
@Controller('metrics')
@OwnAuthentication()
export class MetricsController {
  private readonly logger = new Logger(MetricsController.name);

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
    let body: string;
    try {
      body = await this.metrics.scrape();
    } catch (err) {
      if (!(err instanceof ScrapeUnavailableError)) throw err;
      this.logger.warn(`Scrape answered 503: ${err.message}`);
      void reply.status(SCRAPE_UNAVAILABLE.status).headers(SCRAPE_UNAVAILABLE.headers);
      return SCRAPE_UNAVAILABLE.body;
    }
    void reply.header('content-type', this.metrics.contentType).header('cache-control', 'no-store');
    return body;
  }
}
