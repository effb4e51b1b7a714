import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { LegacyApiUsageService } from './legacy-api-usage.service.js';

/** The day the legacy REST API was deprecated in favour of GraphQL (RFC 9745 `Deprecation`). */
export const DEPRECATED_SINCE = new Date('2026-11-22T00:00:00Z');

export const isLegacyApiPath = (url: string): boolean => url === '/api' || url.startsWith('/api/') || url.startsWith('/api?');

/**
 * What every legacy response carries, errors included, whichever controller or guard answered:
 * `Deprecation` (RFC 9745), `Sunset` (RFC 8594), a `Link` to the migration guide; entity tags and
 * 304 answers for GETs; and a count of the call per credential.
 */
@Injectable()
export class LegacyApiHooks implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly usage: LegacyApiUsageService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return; // The CLI has no HTTP server.
    const { sunset, migrationGuideUrl } = this.config.legacyApi;
    const deprecation = `@${Math.floor(DEPRECATED_SINCE.getTime() / 1000)}`;
    const sunsetDate = sunset.toUTCString();
    const link = `<${migrationGuideUrl}>; rel="deprecation"; type="text/markdown", <${migrationGuideUrl}>; rel="sunset"; type="text/markdown"`;

    // Callback hooks: they run on every request of the service, and an async hook costs a promise each.
    fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      if (isLegacyApiPath(request.url)) void reply.header('deprecation', deprecation).header('sunset', sunsetDate).header('link', link);
      done();
    });

    fastify.addHook(
      'onSend',
      (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
        done(null, this.withEntityTag(request, reply, payload));
      },
    );

    fastify.addHook('onResponse', (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
      if (isLegacyApiPath(request.url)) this.usage.record(request.principal ?? null);
      done();
    });
  }

  /** A legacy GET's 200 gets an entity tag (and becomes an empty 304 when the client has it). */
  private withEntityTag(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
    if (request.method !== 'GET' || !isLegacyApiPath(request.url) || reply.statusCode !== 200) return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    // Representations depend on who asks: caches must key on the credentials and revalidate.
    void reply.header('vary', 'Authorization, Private-Token').header('cache-control', 'private, no-cache');
    const etag = `W/"${createHash('sha256').update(payload).digest('base64url').slice(0, 27)}"`;
    void reply.header('etag', etag);
    if (matches(request.headers['if-none-match'], etag)) {
      void reply.code(304);
      return '';
    }
    return payload;
  }
}

/** If-None-Match uses weak comparison (RFC 9110 §13.1.2): `W/` prefixes do not matter, `*` matches. */
function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((candidate) => candidate.trim() === '*' || opaque(candidate) === opaque(etag));
}
