import { Injectable } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify';
import { HttpRouteSeries, Metrics, UNMATCHED_ROUTE } from './metrics.js';

/**
 * Counts and times every HTTP response by its route pattern (Fastify's route `url`), never its URL. Each
 * route's series is resolved once, when the route is added, and recorded by a hook of that route; only
 * requests no route matched go through a hook of every request (which checks `is404` and nothing else).
 */
@Injectable()
export class HttpMetrics {
  constructor(private readonly metrics: Metrics) {}

  /** Called once by configureApp, before the routes are added; nothing is attached unless /metrics is served. */
  attach(fastify: FastifyInstance): void {
    if (!this.metrics.enabled) return;
    const metrics = this.metrics;
    fastify.addHook('onRoute', (route) => {
      const method = Array.isArray(route.method) ? route.method[0]! : route.method;
      const series = metrics.httpRoute(method, route.url);
      const url = route.url;
      const recorded: onResponseHookHandler = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
        // A route of several methods (or HEAD answered by a GET route's handler) records by the request's method.
        (request.method === method ? series : metrics.httpRoute(request.method, url)).record(reply.statusCode, reply.elapsedTime / 1000);
        done();
      };
      route.onResponse = route.onResponse === undefined ? [recorded] : [...[route.onResponse].flat(), recorded];
    });
    // A request no route matched has no pattern: every such path shares one label value.
    const unmatched = new Map<string, HttpRouteSeries>();
    fastify.addHook('onResponse', (request, reply, done) => {
      if (request.is404) {
        let series = unmatched.get(request.method);
        if (!series) unmatched.set(request.method, (series = metrics.httpRoute(request.method, UNMATCHED_ROUTE)));
        series.record(reply.statusCode, reply.elapsedTime / 1000);
      }
      done();
    });
  }
}
