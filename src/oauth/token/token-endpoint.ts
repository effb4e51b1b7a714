import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Metrics } from '../../metrics/metrics.js';
import { ClientAuthenticator, readParams, readResources, TokenRequestParams } from '../clients/client-authentication.js';
import { SUPPORTED } from '../capabilities.js';
import { OAuthError } from '../oauth.errors.js';
import { parseResourceIndicator } from '../resource-indicator.js';
import { ResourceIndicators } from '../resources/resource-indicators.js';
import { AuthorizationCodeGrant } from './grants/authorization-code.grant.js';
import { ClientCredentialsGrant } from './grants/client-credentials.grant.js';
import { DeviceCodeGrant } from './grants/device-code.grant.js';
import { RefreshTokenGrant } from './grants/refresh-token.grant.js';
import { TokenGrant, TokenResponse } from './token-response.js';

/**
 * The token endpoint (RFC 6749 §3.2) as its steps, in order: read the parameters, pick the grant, check
 * the resource, authenticate the client (and charge its budget), then let the grant check its own
 * parameters and answer (token/grants/, one file each; every one builds its answer with
 * TokenResponseBuilder). Each step raises an OAuthError that knows its wire code.
 */
@Injectable()
export class TokenEndpoint {
  private readonly grants: ReadonlyMap<string, TokenGrant>;

  constructor(
    private readonly clients: ClientAuthenticator,
    private readonly metrics: Metrics,
    private readonly resourceIndicators: ResourceIndicators,
    authorizationCode: AuthorizationCodeGrant,
    refreshToken: RefreshTokenGrant,
    deviceCode: DeviceCodeGrant,
    clientCredentials: ClientCredentialsGrant,
  ) {
    this.grants = new Map([authorizationCode, refreshToken, deviceCode, clientCredentials].map((grant) => [grant.grantType, grant]));
  }

  async token(req: FastifyRequest, reply: FastifyReply): Promise<TokenResponse> {
    try {
      const params = readParams(req.headers['content-type'], req.body);
      const grant = this.grantOf(params);
      const requested = readResources(req.body);
      for (const resource of requested) parseResourceIndicator(resource);
      const application = await this.clients.authenticateCharged(req, reply, params);
      // Looked up once the client proved itself: Agora's API (BASE_URL) and registered identifiers.
      const { resources } = await this.resourceIndicators.resolve(requested);
      const response = await grant.exchange(application, params, resources);
      this.metrics.tokenIssued(grant.grantType);
      return response;
    } catch (err) {
      if (err instanceof OAuthError) this.metrics.tokenRefused(err.code);
      throw err;
    }
  }

  /** One of the grant types discovery lists (which also keeps the tokens-issued metric's label to a fixed set). */
  private grantOf(params: TokenRequestParams): TokenGrant {
    if (!params.grant_type) throw new OAuthError('invalid_request', 'grant_type is required');
    const grant = (SUPPORTED.grantTypes as readonly string[]).includes(params.grant_type) ? this.grants.get(params.grant_type) : undefined;
    if (!grant) throw new OAuthError('unsupported_grant_type', `grant_type must be one of: ${SUPPORTED.grantTypes.join(', ')}`);
    return grant;
  }
}
