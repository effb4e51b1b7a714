import { Injectable } from '@nestjs/common';
import { PreparedStatements, Statement } from '../database/prepared-statements.js';
import { hashSecret } from '../auth/secret-token.js';
import { Clock } from '../clock/clock.js';
import { AuthMethod, toAmr } from '../sessions/authentication-methods.js';
import { AccessTokensService } from './access-tokens.service.js';
import { ApplicationEntity } from './application.entity.js';
import { ClaimsUser, IdTokenService } from './id-token.service.js';
import { OAuthError } from './oauth.errors.js';
import { PkceService } from './pkce.service.js';
import { DEVICE_CODE_GRANT_TYPE, DeviceCodeGrant } from './device-code-grant.js';
import { RefreshTokenGrant } from './refresh-token.grant.js';
import { SUPPORTED } from './server-metadata.js';
import { RefreshTokensService } from './refresh-tokens.service.js';
import { TokenRequestParams } from './client-authentication.js';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  id_token?: string;
  /** Only when `offline_access` was granted (refresh-tokens.service.ts). */
  refresh_token?: string;
}

type Redemption =
  | {
      ok: true;
      code: { scopes: string[]; authTime: Date; amr: AuthMethod[]; nonce: string | null };
      user: ClaimsUser;
      accessToken: string;
      accessTokenId: string;
      expiresIn: number;
    }
  | { ok: false; reason: string };

/**
 * The authorization_code grant (RFC 6749 §4.1.3, RFC 7636 §4.6). Of concurrent redemptions of one
 * code exactly one succeeds; a code presented again revokes the token issued from it (RFC 6749 §4.1.2).
 */
@Injectable()
export class TokenExchangeService {
  constructor(
    private readonly statements: PreparedStatements,
    private readonly accessTokens: AccessTokensService,
    private readonly idTokens: IdTokenService,
    private readonly pkce: PkceService,
    private readonly clock: Clock,
    private readonly refreshTokens: RefreshTokensService,
    private readonly refreshTokenGrant: RefreshTokenGrant,
    private readonly deviceCodeGrant: DeviceCodeGrant,
  ) {}

  checkGrantType(params: TokenRequestParams): void {
    if (!params.grant_type) throw new OAuthError('invalid_request', 'grant_type is required');
    // Also what keeps the grant_type label of the tokens-issued metric to a fixed set.
    if (!GRANT_TYPES.has(params.grant_type))
      throw new OAuthError('unsupported_grant_type', `grant_type must be one of: ${[...GRANT_TYPES].join(', ')}`);
  }

  async exchange(application: ApplicationEntity, params: TokenRequestParams): Promise<TokenResponse> {
    if (params.grant_type === 'refresh_token') return this.refreshTokenGrant.exchange(application, params);
    if (params.grant_type === DEVICE_CODE_GRANT_TYPE) return this.deviceCodeGrant.exchange(application, params);
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
    if (code.scopes.includes('offline_access')) {
      response.refresh_token = await this.refreshTokens.issue({
        applicationId: application.id,
        userId: user.id,
        scopes: code.scopes,
        authTime: code.authTime,
        amr: code.amr,
        accessTokenId: result.accessTokenId,
      });
    }
    if (code.scopes.includes('openid')) {
      response.id_token = await this.idTokens.sign({
        user,
        clientId: application.clientId,
        scopes: code.scopes,
        authTime: code.authTime,
        amr: code.amr,
        nonce: code.nonce,
      });
    }
    return response;
  }

  /**
   * One statement reads the code and, if it is unused, unexpired, this client's, for this redirect URI
   * and of an active user, consumes it and stores the new token: `consumed_at IS NULL` in its UPDATE is
   * the arbiter, so of concurrent redemptions exactly one succeeds, without a transaction held open
   * across round trips. What the code was before the statement explains any failure.
   *
   * PKCE is checked after, in constant time. A wrong or missing code_verifier therefore uses the code
   * up, and the token stored with it is revoked before anyone has seen it: the client that holds the
   * right verifier never sends a wrong one, so a wrong one means the code is in other hands.
   */
  private async redeem(
    application: ApplicationEntity,
    codeValue: string,
    redirectUri: string,
    verifier: string | undefined,
  ): Promise<Redemption> {
    const now = this.clock.now();
    const codeHash = hashSecret(codeValue);
    const issued = this.accessTokens.prepare();
    const [code] = await this.statements.query<CodeRow>(REDEEM, [
      codeHash,
      now,
      issued.id,
      issued.tokenHash,
      application.id,
      issued.expiresAt,
      redirectUri,
    ]);
    if (!code) return { ok: false, reason: 'The authorization code is unknown' };
    if (code.consumed_at) return this.replayed(code.access_token_id);
    if (code.expires_at <= now) return { ok: false, reason: 'The authorization code has expired' };
    if (code.application_id !== application.id) return { ok: false, reason: 'The authorization code was issued to another client' };
    if (code.redirect_uri !== redirectUri) return { ok: false, reason: 'redirect_uri does not match the authorization request' };
    if (code.user_state !== 'active') return { ok: false, reason: 'The user is no longer active' };
    // Another request consumed it between this statement's snapshot and its update: that is a replay too.
    if (!code.issued) return this.replayed((await this.statements.query<CodeRow>(READ_CODE, [codeHash]))[0]?.access_token_id ?? null);
    if (!this.pkce.verify(verifier, code.code_challenge)) {
      await this.accessTokens.revoke([issued.id]);
      return { ok: false, reason: verifier ? 'code_verifier does not match the code_challenge' : 'code_verifier is required' };
    }
    return {
      ok: true,
      code: { scopes: code.scopes, authTime: code.auth_time, amr: toAmr(code.amr), nonce: code.nonce },
      user: { id: code.user_id, username: code.username, name: code.name, email: code.email, emailVerified: code.email_verified },
      accessToken: issued.token,
      accessTokenId: issued.id,
      expiresIn: issued.expiresIn,
    };
  }

  private async replayed(accessTokenId: string | null): Promise<Redemption> {
    if (accessTokenId) {
      await this.accessTokens.revoke([accessTokenId]);
      // And every refresh token that came from the code (RFC 6749 §10.5).
      await this.refreshTokens.revokeFamilyOf(accessTokenId);
    }
    return { ok: false, reason: 'The authorization code was already used; the tokens issued from it are revoked' };
  }
}

/** The grant types discovery lists; also what keeps the tokens-issued metric's label to a fixed set. */
const GRANT_TYPES: ReadonlySet<string> = new Set(SUPPORTED.grantTypes);

interface CodeRow extends Record<string, unknown> {
  application_id: string;
  user_id: string;
  redirect_uri: string;
  scopes: string[];
  nonce: string | null;
  code_challenge: string;
  auth_time: Date;
  amr: string[];
  expires_at: Date;
  consumed_at: Date | null;
  access_token_id: string | null;
  user_state: string;
  username: string;
  name: string;
  email: string;
  email_verified: boolean;
  /** Whether this statement consumed the code and stored the token. */
  issued: boolean;
}

const CODE_COLUMNS = `c.application_id, c.user_id, c.redirect_uri, c.scopes, c.nonce, c.code_challenge, c.auth_time, c.amr,
       c.expires_at, c.consumed_at, c.access_token_id, u.state AS user_state, u.username, u.name, u.email,
       u.email_verified_at IS NOT NULL AS email_verified`;

const READ_CODE: Statement = {
  name: 'oauth_read_code',
  text: `SELECT ${CODE_COLUMNS} FROM oauth_authorization_codes c JOIN users u ON u.id = c.user_id WHERE c.code_hash = $1`,
};

// $1 code hash, $2 now, $3 token id, $4 token hash, $5 application id, $6 token expiry, $7 redirect URI.
// The token row and the code's reference to it are written by one statement, so the foreign key
// (checked at the end of the statement) holds and nothing is left half-done.
const REDEEM: Statement = {
  name: 'oauth_redeem_code',
  text: `
  WITH code AS (
    SELECT ${CODE_COLUMNS} FROM oauth_authorization_codes c JOIN users u ON u.id = c.user_id WHERE c.code_hash = $1
  ), consumed AS (
    UPDATE oauth_authorization_codes SET consumed_at = $2, access_token_id = $3
     WHERE code_hash = $1 AND consumed_at IS NULL AND expires_at > $2 AND application_id = $5 AND redirect_uri = $7
       AND EXISTS (SELECT 1 FROM code WHERE code.user_state = 'active')
    RETURNING user_id, scopes
  ), token AS (
    INSERT INTO oauth_access_tokens (id, token_hash, application_id, user_id, scopes, created_at, expires_at)
    SELECT $3, $4, $5, user_id, scopes, $2, $6 FROM consumed
    RETURNING id
  )
  SELECT code.*, EXISTS (SELECT 1 FROM token) AS issued FROM code`,
};
