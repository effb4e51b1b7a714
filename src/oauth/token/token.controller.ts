import { Controller, HttpCode, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OwnAuthentication, Public } from '../../auth/public.decorator.js';
import type { ApplicationEntity } from '../clients/application.entity.js';
import { ClientAuthenticator, readParams, TokenRequestParams } from '../clients/client-authentication.js';
import { oauthClientErrors } from '../oauth-exception.filter.js';
import { Introspection } from './introspection.js';
import { ResourceServerAuthenticator } from '../resources/resource-server-authentication.js';
import { Revocation } from './revocation.js';
import { TokenEndpoint } from './token-endpoint.js';
import type { TokenResponse } from './token-response.js';

/** Endpoints that clients call with their own credentials: token (RFC 6749), revoke (RFC 7009), introspect (RFC 7662). */
@Controller('oauth')
@Public()
@OwnAuthentication()
@UseFilters(oauthClientErrors)
export class TokenController {
  constructor(
    private readonly endpoint: TokenEndpoint,
    private readonly clients: ClientAuthenticator,
    private readonly revocation: Revocation,
    private readonly introspection: Introspection,
    private readonly resourceServers: ResourceServerAuthenticator,
  ) {}

  @Post('token')
  @HttpCode(200)
  token(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<TokenResponse> {
    noStore(reply);
    return this.endpoint.token(req, reply);
  }

  @Post('revoke')
  @HttpCode(200)
  async revoke(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<Record<string, never>> {
    await this.revocation.revoke(...(await this.authenticated(req, reply)));
    return {};
  }

  /** By a client (its own tokens), or by a resource server with its own credential (tokens for it: RFC 8707). */
  @Post('introspect')
  @HttpCode(200)
  async introspect(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<Record<string, unknown>> {
    noStore(reply);
    const params = readParams(req.headers['content-type'], req.body);
    const server = await this.resourceServers.authenticate(req, reply, params);
    if (server) return this.introspection.introspectForResourceServer(server, params);
    return this.introspection.introspect(await this.clients.authenticateCharged(req, reply, params), params);
  }

  /** The request's parameters and its client, authenticated and charged (as at the token endpoint). */
  private async authenticated(req: FastifyRequest, reply: FastifyReply): Promise<[ApplicationEntity, TokenRequestParams]> {
    noStore(reply);
    const params = readParams(req.headers['content-type'], req.body);
    return [await this.clients.authenticateCharged(req, reply, params), params];
  }
}

function noStore(reply: FastifyReply): void {
  void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}
