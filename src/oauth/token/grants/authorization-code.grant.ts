import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../../../config/config.module.js';
import type { AppConfig } from '../../../config/config.schema.js';
import { narrowResources } from '../../resource-indicator.js';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EntityTable } from '../../../database/entity-table.js';
import { UsersService, type UserClaimsRow } from '../../../users/users.service.js';
import { AuthorizationCodeEntity } from '../../authorize/authorization-code.entity.js';
import { AccessTokenEntity } from '../../tokens/access-token.entity.js';
import { PreparedStatements, Statement } from '../../../database/prepared-statements.js';
import { hashSecret } from '../../../auth/secret-token.js';
import { Clock } from '../../../clock/clock.js';
import { toAmr } from '../../../auth/authentication-methods.js';
import { AccessTokensService } from '../../tokens/access-tokens.service.js';
import { ApplicationEntity } from '../../clients/application.entity.js';
import type { TokenRequestParams } from '../../clients/client-authentication.js';
import { OAuthError, type OAuthErrorCode } from '../../oauth.errors.js';
import { PkceService } from '../../pkce.service.js';
import { RefreshTokensService } from '../../tokens/refresh-tokens.service.js';
import { IssuedGrant, TokenGrant, TokenResponse, TokenResponseBuilder } from '../token-response.js';

type Redemption = { ok: true; issued: Omit<IssuedGrant, 'application'> } | { ok: false; error?: OAuthErrorCode; reason: string };

/**
 * grant_type=authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.6). Of concurrent redemptions of one
 * code exactly one succeeds; a code presented again revokes the token issued from it (RFC 6749 §4.1.2).
 */
@Injectable()
export class AuthorizationCodeGrant implements TokenGrant {
  readonly grantType = 'authorization_code';

  constructor(
    private readonly statements: PreparedStatements,
    private readonly accessTokens: AccessTokensService,
    private readonly pkce: PkceService,
    private readonly clock: Clock,
    private readonly refreshTokens: RefreshTokensService,
    private readonly responses: TokenResponseBuilder,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() dataSource: DataSource,
    users: UsersService,
  ) {
    const codes = EntityTable.of(dataSource, AuthorizationCodeEntity, 'c');
    this.codes = codes.pick(...CODE_READ);
    const code = `SELECT ${this.codes.select}, ${users.claimsAs('u')} FROM oauth_authorization_codes c JOIN users u ON u.id = c.user_id WHERE c.code_hash = $1`;
    this.readCode = { name: 'oauth_read_code', text: code };
    // A column of `consumed`, the code this redemption consumes: it returns what the token takes of it.
    const consumed = (property: (typeof TOKEN_FROM_CODE)[number]) => codes.column(property);
    const token = EntityTable.of(dataSource, AccessTokenEntity, 't').values({
      id: '$3',
      tokenHash: '$4',
      applicationId: '$5',
      userId: consumed('userId'),
      scopes: consumed('scopes'),
      audience: `CASE WHEN cardinality($8::text[]) = 0 THEN ${consumed('resources')} ELSE $8::text[] END`,
      createdAt: '$2',
      expiresAt: '$6',
    });
    // $1 code hash, $2 now, $3 token id, $4 token hash, $5 application id, $6 token expiry, $7 redirect URI,
    // $8 the resources asked for (RFC 8707 §2.2: within the code's, whose empty list is Agora's API, $9).
    // The token's audience is what was asked for, or every resource of the code.
    // The token row and the code's reference to it are written by one statement, so the foreign key
    // (checked at the end of the statement) holds and nothing is left half-done.
    this.redeemCode = {
      name: 'oauth_redeem_code',
      text: `
  WITH code AS (
    ${code}
  ), consumed AS (
    UPDATE oauth_authorization_codes SET consumed_at = $2, access_token_id = $3
     WHERE code_hash = $1 AND consumed_at IS NULL AND expires_at > $2 AND application_id = $5 AND redirect_uri = $7
       AND $8::text[] <@ (CASE WHEN cardinality(resources) = 0 THEN ARRAY[$9::text] ELSE resources END)
       AND EXISTS (SELECT 1 FROM code WHERE code.user_state = 'active')
    RETURNING ${codes.list(...TOKEN_FROM_CODE)}
  ), token AS (
    INSERT INTO oauth_access_tokens (${token.columns})
    SELECT ${token.values} FROM consumed
    RETURNING id
  )
  SELECT code.*, EXISTS (SELECT 1 FROM token) AS issued FROM code`,
    };
  }

  /** What the token exchange reads of a code. */
  private readonly codes: EntityTable<Pick<AuthorizationCodeEntity, CodeColumn>, AuthorizationCodeEntity>;
  private readonly readCode: Statement;
  private readonly redeemCode: Statement;

  async exchange(application: ApplicationEntity, params: TokenRequestParams, resources: readonly string[]): Promise<TokenResponse> {
    for (const name of ['code', 'redirect_uri'] as const) {
      if (!params[name]) throw new OAuthError('invalid_request', `${name} is required`);
    }
    const result = await this.redeem(application, params.code!, params.redirect_uri!, params.code_verifier, resources);
    if (!result.ok) throw new OAuthError(result.error ?? 'invalid_grant', result.reason);
    return this.responses.build({ application, ...result.issued });
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
    requested: readonly string[],
  ): Promise<Redemption> {
    const now = this.clock.now();
    const codeHash = hashSecret(codeValue);
    const issued = this.accessTokens.prepare(application.accessTokenFormat);
    const [row] = await this.statements.query<CodeRow>(this.redeemCode, [
      codeHash,
      now,
      issued.id,
      issued.tokenHash,
      application.id,
      issued.expiresAt,
      redirectUri,
      requested,
      this.config.baseUrl,
    ]);
    if (!row) return { ok: false, reason: 'The authorization code is unknown' };
    const code = this.codes.map(row);
    if (code.consumedAt) return this.replayed(code.accessTokenId);
    if (code.expiresAt <= now) return { ok: false, reason: 'The authorization code has expired' };
    if (code.applicationId !== application.id) return { ok: false, reason: 'The authorization code was issued to another client' };
    if (code.redirectUri !== redirectUri) return { ok: false, reason: 'redirect_uri does not match the authorization request' };
    if (row.user_state !== 'active') return { ok: false, reason: 'The user is no longer active' };
    let audience: string[];
    try {
      audience = narrowResources(code.resources, requested, this.config.baseUrl);
    } catch (err) {
      // The code is left unused: the client may ask again within what was authorized.
      if (err instanceof OAuthError) return { ok: false, error: err.code, reason: err.description };
      throw err;
    }
    // Another request consumed it between this statement's snapshot and its update: that is a replay too.
    if (!row.issued) {
      const [again] = await this.statements.query<CodeRow>(this.readCode, [codeHash]);
      return this.replayed(again ? this.codes.map(again).accessTokenId : null);
    }
    if (!this.pkce.verify(verifier, code.codeChallenge)) {
      await this.accessTokens.revoke([issued.id]);
      return { ok: false, reason: verifier ? 'code_verifier does not match the code_challenge' : 'code_verifier is required' };
    }
    return {
      ok: true,
      issued: {
        accessToken: { token: issued.token, id: issued.id, expiresIn: issued.expiresIn },
        user: { id: code.userId, username: row.username, name: row.name, email: row.email, emailVerified: row.email_verified },
        scopes: code.scopes,
        audience,
        authorizedResources: code.resources,
        authTime: code.authTime,
        amr: toAmr(code.amr),
        nonce: code.nonce,
        sessionId: code.sessionId,
      },
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

/** What the token exchange reads of a code (not its hash: the statement found it by it). */
const CODE_READ = [
  'applicationId',
  'userId',
  'redirectUri',
  'scopes',
  'resources',
  'nonce',
  'codeChallenge',
  'authTime',
  'amr',
  'expiresAt',
  'consumedAt',
  'accessTokenId',
  'sessionId',
] as const satisfies readonly (keyof AuthorizationCodeEntity)[];
type CodeColumn = (typeof CODE_READ)[number];

/** What the access token takes of the code it is issued for: its user, its scopes, its audience from the code's resources. */
const TOKEN_FROM_CODE = ['userId', 'scopes', 'resources'] as const satisfies readonly (keyof AuthorizationCodeEntity)[];

/** A code's columns (`codes`), its user's claims, and whether this statement consumed it and stored the token. */
interface CodeRow extends UserClaimsRow, Record<string, unknown> {
  issued: boolean;
}
