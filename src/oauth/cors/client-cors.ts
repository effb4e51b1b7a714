import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { IsNull, Not, Repository } from 'typeorm';
import { CredentialVerifier } from '../../auth/credential-verifier.js';
import { ApplicationEntity } from '../clients/application.entity.js';
import { AllowedOrigins } from './allowed-origins.js';
import { CORS_ROUTES } from './cors-routes.js';

// The MCP endpoint's own headers (Streamable HTTP) besides the API's: a browser-based MCP client sends them.
const ALLOWED_HEADERS = 'Authorization, Content-Type, Mcp-Protocol-Version, Mcp-Session-Id';
const EXPOSED_HEADERS =
  'WWW-Authenticate, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Used, X-RateLimit-Reset, X-Request-Id, Mcp-Session-Id';
const MAX_AGE_SECONDS = '600';

/**
 * CORS on CORS_ROUTES. The public documents and registration answer every origin with `*`. The rest
 * (tokens, userinfo, the API) answer single-page apps (public clients) for their registered origins only: the
 * origin of any redirect URI of a public application (AllowedOrigins) that someone vouched for. An
 * application registered in the dashboard is; one that registered itself (RFC 7591) only once an
 * operator claimed it or a user consented to it, so registering cannot add an origin by itself. An allowed origin gets
 * `Access-Control-Allow-Origin: <origin>`, never `*` and never `Access-Control-Allow-Credentials`, so
 * the browser sends no cookie and the dashboard's session is never usable from another site: these
 * endpoints take a token or client credentials, not a session. Another origin gets no CORS header
 * (its preflight is answered 204 without one), and a request without `Origin` is untouched.
 */
@Injectable()
export class ClientCors {
  constructor(
    @InjectRepository(ApplicationEntity) private readonly applications: Repository<ApplicationEntity>,
    private readonly credentials: CredentialVerifier,
  ) {}

  /** Called once by configureApp, after the security headers' hook. */
  attach(fastify: FastifyInstance): void {
    fastify.addHook('onRequest', async (request, reply) => {
      const route = CORS_ROUTES.get(pathOf(request.url));
      if (!route) return;
      const { methods } = route;
      void reply.header('vary', 'Origin');
      const origin = request.headers.origin;
      if (origin === undefined) return;
      const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
      if (!preflight && !methods.includes(request.method)) return;
      const allowed = route.audience === 'anyone' ? '*' : (await this.allows(origin)) ? origin : undefined;
      if (preflight) return this.answerPreflight(reply, allowed, methods);
      if (allowed) void reply.header('access-control-allow-origin', allowed).header('access-control-expose-headers', EXPOSED_HEADERS);
    });
  }

  /** Whether a browser app on `origin` may call these endpoints; cached with the OAuth clients. */
  async allows(origin: string): Promise<boolean> {
    const origins = await this.credentials.derivedFromClients('cors-origins', async () => {
      const rows = await this.applications.find({
        select: { redirectUris: true },
        where: [
          { clientType: 'public', ownerId: Not(IsNull()) },
          { clientType: 'public', firstConsentedAt: Not(IsNull()) },
        ],
      });
      return new AllowedOrigins(rows.flatMap((row) => row.redirectUris));
    });
    return origins.allows(origin);
  }

  private answerPreflight(reply: FastifyReply, origin: string | undefined, methods: readonly string[]): FastifyReply {
    if (origin !== undefined) {
      void reply
        .header('access-control-allow-origin', origin)
        .header('access-control-allow-methods', methods.join(', '))
        .header('access-control-allow-headers', ALLOWED_HEADERS)
        .header('access-control-max-age', MAX_AGE_SECONDS);
    }
    return reply.status(204).header('cache-control', 'no-store').send();
  }
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
