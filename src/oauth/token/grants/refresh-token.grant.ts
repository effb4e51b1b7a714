import { Injectable } from '@nestjs/common';
import { isScope, parseScopeList } from '../../../auth/scopes.js';
import { ApplicationEntity } from '../../clients/application.entity.js';
import type { TokenRequestParams } from '../../clients/client-authentication.js';
import { OAuthError } from '../../oauth.errors.js';
import { RefreshTokensService } from '../../tokens/refresh-tokens.service.js';
import { TokenGrant, TokenResponse, TokenResponseBuilder } from '../token-response.js';

/**
 * grant_type=refresh_token (RFC 6749 §6): a new access token, a successor refresh token (rotation)
 * and, with `openid`, a new id_token with the original `auth_time`, `amr`, `acr` and `sid` (the session
 * the family's authorization came from) and no nonce (OIDC Core §12.2: the refresh is no new sign-in).
 */
@Injectable()
export class RefreshTokenGrant implements TokenGrant {
  readonly grantType = 'refresh_token';

  constructor(
    private readonly refreshTokens: RefreshTokensService,
    private readonly responses: TokenResponseBuilder,
  ) {}

  async exchange(application: ApplicationEntity, params: TokenRequestParams, resources: readonly string[]): Promise<TokenResponse> {
    if (!params.refresh_token) throw new OAuthError('invalid_request', 'refresh_token is required');
    const requested = params.scope === undefined ? null : requestedScopes(params.scope);
    const result = await this.refreshTokens.rotate(
      application.id,
      params.refresh_token,
      requested,
      application.accessTokenFormat,
      resources,
    );
    if (!result.ok) throw new OAuthError(result.error, result.reason);
    return this.responses.build({
      application,
      accessToken: { token: result.accessToken, id: result.accessTokenId, expiresIn: result.expiresIn },
      user: result.user,
      scopes: result.scopes,
      audience: result.audience,
      authTime: result.authTime,
      amr: result.amr,
      nonce: null,
      rotatedRefreshToken: result.refreshToken,
      sessionId: result.sessionId,
    });
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
