import { Controller, HttpCode, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OwnAuthentication, Public } from '../auth/public.decorator.js';
import { AccessTokensService } from './access-tokens.service.js';
import { ApplicationEntity } from './application.entity.js';
import { ClientAuthenticator, clientBudget, readParams, TokenRequestParams } from './client-authentication.js';
import { oauthClientErrors } from './oauth-exception.filter.js';
import { OAuthError } from './oauth.errors.js';
import { checkResourceIndicator } from './resource-indicator.js';
import { TokenExchangeService } from './token-exchange.service.js';
import { RefreshTokensService } from './refresh-tokens.service.js';
import { Inject } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { Metrics } from '../metrics/metrics.js';
import { RateLimits } from '../rate-limits/rate-limits.service.js';

/** Endpoints that clients call with their own credentials: token (RFC 6749), revoke (RFC 7009), introspect (RFC 7662). */
@Controller('oauth')
@Public()
@OwnAuthentication()
@UseFilters(oauthClientErrors)
export class TokenController {
  constructor(
    private readonly clients: ClientAuthenticator,
    private readonly exchange: TokenExchangeService,
    private readonly accessTokens: AccessTokensService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
    private readonly rateLimits: RateLimits,
    private readonly refreshTokens: RefreshTokensService,
  ) {}

  @Post('token')
  @HttpCode(200)
  async token(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<unknown> {
    noStore(reply);
    try {
      const params = readParams(req.headers['content-type'], req.body);
      this.exchange.checkGrantType(params);
      checkResourceIndicator(params.resource, this.config.baseUrl);
      const application = await this.authenticateCharged(req, reply, params);
      const issued = await this.exchange.exchange(application, params);
      this.metrics.tokenIssued(params.grant_type!);
      return issued;
    } catch (err) {
      if (err instanceof OAuthError) this.metrics.tokenRefused(err.code);
      throw err;
    }
  }

  @Post('revoke')
  @HttpCode(200)
  async revoke(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<Record<string, never>> {
    noStore(reply);
    const params = readParams(req.headers['content-type'], req.body);
    const application = await this.authenticateCharged(req, reply, params);
    if (!params.token) throw new OAuthError('invalid_request', 'token is required');
    // token_type_hint is not needed: the prefix tells the kinds apart (RFC 7009 §2.1 lets a server ignore it).
    // A refresh token takes its family and the access tokens issued from it along.
    if (await this.refreshTokens.revokeForClient(params.token, application.id)) return {};
    const active = await this.accessTokens.findActive(params.token);
    // Unknown tokens, and tokens of other clients, are answered the same way (RFC 7009 §2.2).
    if (active && active.principal.credential.clientId === application.clientId)
      await this.accessTokens.revoke([active.principal.credential.id]);
    return {};
  }

  @Post('introspect')
  @HttpCode(200)
  async introspect(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<Record<string, unknown>> {
    noStore(reply);
    const params = readParams(req.headers['content-type'], req.body);
    const application = await this.authenticateCharged(req, reply, params);
    if (!params.token) throw new OAuthError('invalid_request', 'token is required');
    const refresh = await this.refreshTokens.findActive(params.token, application.id);
    if (refresh) {
      return {
        active: true,
        scope: refresh.scopes.join(' '),
        client_id: refresh.clientId,
        username: refresh.user.username,
        token_type: 'refresh_token',
        exp: Math.floor(refresh.expiresAt.getTime() / 1000),
        iat: Math.floor(refresh.issuedAt.getTime() / 1000),
        sub: refresh.user.id,
        aud: refresh.clientId,
        iss: this.config.baseUrl,
      };
    }
    const active = await this.accessTokens.findActive(params.token);
    // A client learns only about its own tokens.
    if (!active || active.principal.credential.clientId !== application.clientId) return { active: false };
    const { principal } = active;
    return {
      active: true,
      scope: [...principal.scopes].join(' '),
      client_id: application.clientId,
      username: principal.user.username,
      token_type: 'Bearer',
      exp: Math.floor(active.expiresAt.getTime() / 1000),
      iat: Math.floor(active.issuedAt.getTime() / 1000),
      sub: principal.user.id,
      aud: application.clientId,
      iss: this.config.baseUrl,
    };
  }

  /**
   * The client, authenticated, and charged 1 request of its budget (clientBudget): token, revocation and
   * introspection requests share it, so that none of them is a way around it. A caller that fails to
   * authenticate spends nothing of the client's budget.
   */
  private async authenticateCharged(req: FastifyRequest, reply: FastifyReply, params: TokenRequestParams): Promise<ApplicationEntity> {
    const application = await this.clients.authenticate(req.headers.authorization, params);
    await this.rateLimits.charge(reply, clientBudget(application, req.ip), 1);
    return application;
  }
}

function noStore(reply: FastifyReply): void {
  void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}
