import { Injectable } from '@nestjs/common';
import { isScope, parseScopeList } from '../auth/scopes.js';
import { ApplicationEntity } from './application.entity.js';
import type { TokenRequestParams } from './client-authentication.js';
import { IdTokenService } from './id-token.service.js';
import { OAuthError } from './oauth.errors.js';
import { RefreshTokensService } from './refresh-tokens.service.js';
import type { TokenResponse } from './token-exchange.service.js';

/**
 * grant_type=refresh_token (RFC 6749 §6): a new access token, a successor refresh token (rotation)
 * and, with `openid`, a new id_token with the original `auth_time`, `amr` and `acr` and no nonce (OIDC
 * Core §12.2: the refresh is no new sign-in).
 */
@Injectable()
export class RefreshTokenGrant {
  constructor(
    private readonly refreshTokens: RefreshTokensService,
    private readonly idTokens: IdTokenService,
  ) {}

  async exchange(application: ApplicationEntity, params: TokenRequestParams): Promise<TokenResponse> {
    if (!params.refresh_token) throw new OAuthError('invalid_request', 'refresh_token is required');
    const requested = params.scope === undefined ? null : requestedScopes(params.scope);
    const result = await this.refreshTokens.rotate(application.id, params.refresh_token, requested);
    if (!result.ok) throw new OAuthError(result.error, result.reason);
    const response: TokenResponse = {
      access_token: result.accessToken,
      token_type: 'Bearer',
      expires_in: result.expiresIn,
      scope: result.scopes.join(' '),
      refresh_token: result.refreshToken,
    };
    if (result.scopes.includes('openid')) {
      response.id_token = await this.idTokens.sign({
        user: result.user,
        clientId: application.clientId,
        scopes: result.scopes,
        authTime: result.authTime,
        amr: result.amr,
        nonce: null,
      });
    }
    return response;
  }
}

/** The narrower scope asked for: known scopes only; whether the token carries them is checked with it. */
function requestedScopes(value: string): string[] {
  const scopes = parseScopeList(value);
  if (scopes.length === 0) throw new OAuthError('invalid_scope', 'scope is empty: leave it out to keep every granted scope');
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) throw new OAuthError('invalid_scope', `Unknown scope: ${unknown.join(' ')}`);
  return scopes;
}
