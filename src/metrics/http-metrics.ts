import { Injectable } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { Metrics, UNMATCHED_ROUTE } from './metrics.js';

/** Counts and times every HTTP response by its route pattern (Fastify's `routeOptions.url`), never its URL. */
@Injectable()
export class HttpMetrics {
  constructor(private readonly metrics: Metrics) {}

  /** Called once by configureApp; nothing is attached unless /metrics is served. */
  attach(fastify: FastifyInstance): void {
    if (!this.metrics.enabled) return;
    const metrics = this.metrics;
    fastify.addHook('onResponse', (request, reply, done) => {
      // A request no route matched has no pattern: every such path shares one label value.
      metrics.httpRequest(request.method, request.routeOptions.url ?? UNMATCHED_ROUTE, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
  }
}
