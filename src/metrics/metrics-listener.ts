import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { ScrapeUnavailableError } from './cluster-metrics.js';
import { Metrics } from './metrics.js';
import { SCRAPE_REFUSED, SCRAPE_UNAVAILABLE, ScrapeAccess } from './scrape-access.js';

/**
 * The second listener of METRICS_PORT: `GET /metrics` and nothing else (404), so the port can be left
 * to the monitoring network while the main one faces clients. Started by the server (main.ts) after
 * the main listener, never by the CLI, and closed with the application.
 */
@Injectable()
export class MetricsListener implements OnApplicationShutdown {
  private readonly logger = new Logger(MetricsListener.name);
  private server?: Server;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
    private readonly access: ScrapeAccess,
  ) {}

  /** Listens when METRICS_PORT is set; the address, else undefined. */
  async listen(): Promise<AddressInfo | undefined> {
    const { port, host } = this.config.metrics;
    if (port === undefined) return undefined;
    const server = createServer((req, res) => void this.answer(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return server.address() as AddressInfo;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?', 1)[0];
    if (path !== '/metrics') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD' }).end();
    if (!this.access.allows(req.headers.authorization))
      return void res.writeHead(SCRAPE_REFUSED.status, SCRAPE_REFUSED.headers).end(SCRAPE_REFUSED.body);
    try {
      const body = await this.metrics.scrape();
      res
        .writeHead(200, { 'content-type': this.metrics.contentType, 'cache-control': 'no-store' })
        .end(req.method === 'HEAD' ? undefined : body);
    } catch (err) {
      if (!(err instanceof ScrapeUnavailableError)) {
        this.logger.error(`Scrape failed: ${(err as Error).message}`);
        return void res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal Server Error\n');
      }
      this.logger.warn(`Scrape answered 503: ${err.message}`);
      res.writeHead(SCRAPE_UNAVAILABLE.status, SCRAPE_UNAVAILABLE.headers).end(SCRAPE_UNAVAILABLE.body);
    }
  }
}
