import { Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';

const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest();

/** Who may scrape: anyone reaching the metrics listener, or with METRICS_TOKEN set, whoever sends it as a Bearer token. */
@Injectable()
export class ScrapeAccess {
  private readonly expected?: Buffer;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    if (config.metrics.token !== undefined) this.expected = sha256(config.metrics.token);
  }

  /** Compared as SHA-256 digests in constant time, so neither the length nor a prefix of the token leaks. */
  allows(authorization: string | undefined): boolean {
    if (!this.expected) return true;
    const match = /^Bearer ([^\s]+)$/i.exec(authorization ?? '');
    return match !== null && timingSafeEqual(sha256(match[1]!), this.expected);
  }
}

/** A scrape of the whole process group that could not be completed now (ScrapeUnavailableError). */
export const SCRAPE_UNAVAILABLE = {
  status: 503,
  headers: { 'retry-after': '5', 'cache-control': 'no-store', 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify({ message: '503 Service Unavailable' }),
} as const;

/** The answer to a scrape without the token. */
export const SCRAPE_REFUSED = {
  status: 401,
  headers: { 'www-authenticate': 'Bearer realm="metrics"', 'cache-control': 'no-store', 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify({ message: '401 Unauthorized' }),
} as const;
