import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { hashSecret } from '../auth/secret-token.js';
import { Clock } from '../clock/clock.js';
import { UserEntity } from '../users/user.entity.js';
import { AccessTokensService } from './access-tokens.service.js';
import { ApplicationEntity } from './application.entity.js';
import { AuthorizationCodeEntity } from './authorization-code.entity.js';
import { IdTokenService } from './id-token.service.js';
import { OAuthError } from './oauth.errors.js';
import { PkceService } from './pkce.service.js';
import { TokenRequestParams } from './client-authentication.js';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  id_token?: string;
}

type Redemption =
  { ok: true; code: AuthorizationCodeEntity; user: UserEntity; accessToken: string; expiresIn: number } | { ok: false; reason: string };

/**
 * The authorization_code grant (RFC 6749 §4.1.3, RFC 7636 §4.6). The code row is locked for the whole
 * check-and-consume, so of concurrent redemptions exactly one succeeds; a code presented again revokes
 * the token issued from it (RFC 6749 §4.1.2).
 */
@Injectable()
export class TokenExchangeService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly accessTokens: AccessTokensService,
    private readonly idTokens: IdTokenService,
    private readonly pkce: PkceService,
    private readonly clock: Clock,
  ) {}

  checkGrantType(params: TokenRequestParams): void {
    if (!params.grant_type) throw new OAuthError('invalid_request', 'grant_type is required');
    if (params.grant_type !== 'authorization_code')
      throw new OAuthError('unsupported_grant_type', 'Only grant_type=authorization_code is supported');
  }

  async exchange(application: ApplicationEntity, params: TokenRequestParams): Promise<TokenResponse> {
    for (const name of ['code', 'redirect_uri'] as const) {
      if (!params[name]) throw new OAuthError('invalid_request', `${name} is required`);
    }
    const result = await this.redeem(application, params.code!, params.redirect_uri!, params.code_verifier);
    if (!result.ok) throw new OAuthError('invalid_grant', result.reason);

    const { code, user } = result;
    const response: TokenResponse = {
      access_token: result.accessToken,
      token_type: 'Bearer',
      expires_in: result.expiresIn,
      scope: code.scopes.join(' '),
    };
    if (code.scopes.includes('openid')) {
      response.id_token = await this.idTokens.sign({
        user,
        clientId: application.clientId,
        scopes: code.scopes,
        authTime: code.authTime,
        nonce: code.nonce,
      });
    }
    return response;
  }

  private redeem(
    application: ApplicationEntity,
    codeValue: string,
    redirectUri: string,
    verifier: string | undefined,
  ): Promise<Redemption> {
    const now = this.clock.now();
    return this.dataSource.transaction(async (manager): Promise<Redemption> => {
      const code = await manager
        .createQueryBuilder(AuthorizationCodeEntity, 'c')
        .setLock('pessimistic_write')
        .where('c.code_hash = :hash', { hash: hashSecret(codeValue) })
        .getOne();
      if (!code) return { ok: false, reason: 'The authorization code is unknown' };
      if (code.consumedAt) {
        if (code.accessTokenId) await this.accessTokens.revoke([code.accessTokenId], manager);
        return { ok: false, reason: 'The authorization code was already used; the token issued from it is revoked' };
      }
      if (code.expiresAt <= now) return { ok: false, reason: 'The authorization code has expired' };
      if (code.applicationId !== application.id) return { ok: false, reason: 'The authorization code was issued to another client' };
      if (code.redirectUri !== redirectUri) return { ok: false, reason: 'redirect_uri does not match the authorization request' };
      if (!this.pkce.verify(verifier, code.codeChallenge)) {
        return { ok: false, reason: verifier ? 'code_verifier does not match the code_challenge' : 'code_verifier is required' };
      }
      const user = await manager.findOneBy(UserEntity, { id: code.userId, state: 'active' });
      if (!user) return { ok: false, reason: 'The user is no longer active' };

      const issued = await this.accessTokens.issue(manager, { applicationId: application.id, userId: code.userId, scopes: code.scopes });
      await manager.update(AuthorizationCodeEntity, { codeHash: code.codeHash }, { consumedAt: now, accessTokenId: issued.id });
      return { ok: true, code, user, accessToken: issued.token, expiresIn: issued.expiresIn };
    });
  }
}
