import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { ArrayContains, DataSource, In, IsNull, Repository } from 'typeorm';
import { CredentialVerifier, TokenVerifier } from '../../auth/credential-verifier.js';
import { CredentialRow, Principal, serviceAccountPrincipal, toPrincipal } from '../../auth/principal.js';
import { generateSecret, hashSecret, isWellFormedSecret, SecretPrefix } from '../../auth/secret-token.js';
import { Clock } from '../../clock/clock.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { EntityTable } from '../../database/entity-table.js';
import { UsersService } from '../../users/users.service.js';
import { AccessTokenFormat, ApplicationEntity } from '../clients/application.entity.js';
import { AccessTokenEntity } from './access-token.entity.js';
import { JWT_PREFIX, JwtAccessTokens } from './jwt-access-tokens.js';
import { audienceIncludesAgora } from '../resource-indicator.js';

interface TokenRow extends CredentialRow {
  client_id: string;
  /** A service account's organizer (its token has no user); null for a user's token. */
  organizer_id: string | null;
}

export interface ActiveToken {
  principal: Principal;
  /** Where it may be used (RFC 8707): empty for Agora's API alone; BASE_URL and resource servers' identifiers. */
  audience: string[];
  issuedAt: Date;
  expiresAt: Date;
}

/**
 * OAuth access tokens: issued by the token endpoint, accepted as `Authorization: Bearer`. Each is a row;
 * its value is an opaque `agora_oat_` token (found by its hash) or, for an application whose format is
 * `jwt`, an RFC 9068 JWT (JwtAccessTokens; found by its `jti` once its signature checks out).
 */
@Injectable()
export class AccessTokensService implements TokenVerifier, OnModuleInit {
  readonly prefix = SecretPrefix.oauthAccessToken;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly verifier: CredentialVerifier,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectRepository(AccessTokenEntity) private readonly tokens: Repository<AccessTokenEntity>,
    private readonly jwts: JwtAccessTokens,
    users: UsersService,
  ) {
    this.table = EntityTable.of(dataSource, AccessTokenEntity, 't').pick('id', 'userId', 'scopes', 'audience', 'createdAt', 'expiresAt');
    const applications = EntityTable.of(dataSource, ApplicationEntity, 'a');
    this.lookup = `
  SELECT ${this.table.select}, a.${applications.column('clientId')} AS client_id, a.${applications.column('organizerId')} AS organizer_id,
         ${users.claimsAs('u')}
    FROM oauth_access_tokens t
    JOIN oauth_applications a ON a.id = t.application_id
    LEFT JOIN users u ON u.id = t.user_id
   WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > $2
     AND (u.state = 'active' OR (t.user_id IS NULL AND a.${applications.column('organizerId')} IS NOT NULL))`;
    this.lookupById = this.lookup.replace('t.token_hash = $1', 't.id = $1');
  }

  /** The token's own columns that its lookup reads. */
  private readonly table: EntityTable<
    Pick<AccessTokenEntity, 'id' | 'userId' | 'scopes' | 'audience' | 'createdAt' | 'expiresAt'>,
    AccessTokenEntity
  >;
  /** The live token of a hash, with its client and the user's claims: one statement per authenticated request. */
  private readonly lookup: string;
  /** The same, by the token's id: a JWT access token's `jti`. */
  private readonly lookupById: string;

  onModuleInit(): void {
    this.verifier.register(this);
    // JWT access tokens, told apart by how every JWT starts.
    this.verifier.register({ prefix: JWT_PREFIX, verify: (token) => this.verify(token) });
  }

  /**
   * A new token's values, for the caller to store (the token exchange writes it in the same statement
   * that consumes the code). The secret is returned only here; the database gets its hash. For a JWT
   * access token (`format` jwt) the row is the same, only shorter-lived, and the response builder signs
   * the JWT after the database work (TokenResponseBuilder): the opaque secret is then never shown.
   */
  prepare(format: AccessTokenFormat = 'opaque'): {
    id: string;
    token: string;
    tokenHash: string;
    expiresAt: Date;
    expiresIn: number;
  } {
    const token = generateSecret(SecretPrefix.oauthAccessToken);
    const ttl = format === 'jwt' ? this.config.oauth.jwtAccessTokenTtlMs : this.config.oauth.accessTokenTtlMs;
    return {
      id: randomUUID(),
      token,
      tokenHash: hashSecret(token),
      expiresAt: new Date(this.clock.now().getTime() + ttl),
      expiresIn: ttl / 1000,
    };
  }

  /**
   * Stores a service account's token (no user: it acts for its organizer) and returns it, shown this once;
   * its lifetime is its format's (a JWT's is the shorter one).
   */
  async issueForServiceAccount(
    applicationId: string,
    scopes: string[],
    format: AccessTokenFormat = 'opaque',
    audience: readonly string[] = [],
  ): Promise<{ token: string; id: string; expiresIn: number }> {
    const issued = this.prepare(format);
    await this.tokens.insert({
      id: issued.id,
      tokenHash: issued.tokenHash,
      applicationId,
      userId: null,
      scopes,
      audience: [...audience],
      createdAt: this.clock.now(),
      expiresAt: issued.expiresAt,
    });
    return { token: issued.token, id: issued.id, expiresIn: issued.expiresIn };
  }

  /**
   * Agora's API: the principal of a live token whose audience includes it. A token for other resource
   * servers only (RFC 8707) is refused exactly like an unknown one.
   */
  async verify(token: string, tokenHash?: string): Promise<Principal | null> {
    const active = await this.findActive(token, tokenHash);
    return active && audienceIncludesAgora(active.audience, this.config.baseUrl) ? active.principal : null;
  }

  /**
   * The live token with this value, opaque or JWT, if any, whatever its audience (for introspection and
   * revocation; the API goes through `verify`).
   */
  async findActive(token: string, tokenHash?: string): Promise<ActiveToken | null> {
    let rows: TokenRow[];
    if (token.startsWith(JWT_PREFIX)) {
      const jwt = await this.jwts.read(token);
      if (!jwt) return null;
      rows = await this.dataSource.query(this.lookupById, [jwt.id, this.clock.now()]);
      if (rows[0] && rows[0].client_id !== jwt.clientId) return null;
      // Its aud must be the one it was signed with: the row's audience (none recorded: Agora's API).
      if (rows[0] && !sameAudience(jwt.audience, this.table.map(rows[0]).audience, this.config.baseUrl)) return null;
    } else {
      if (!isWellFormedSecret(token, SecretPrefix.oauthAccessToken)) return null;
      rows = await this.dataSource.query(this.lookup, [tokenHash ?? hashSecret(token), this.clock.now()]);
    }
    const row = rows[0];
    if (!row) return null;
    const found = this.table.map(row);
    const credential = { kind: 'oauth_access_token' as const, id: found.id, clientId: row.client_id, expiresAt: found.expiresAt };
    return {
      principal:
        found.userId === null && row.organizer_id !== null
          ? serviceAccountPrincipal(row.organizer_id, row.scopes, credential)
          : toPrincipal(row, credential),
      audience: found.audience,
      issuedAt: found.createdAt,
      expiresAt: found.expiresAt,
    };
  }

  /**
   * A token stored with an opaque token's lifetime and then signed as a JWT (a resource server that
   * takes JWTs asked for it: TokenResponseBuilder) lives no longer than a JWT. Returns that lifetime in seconds.
   */
  async shortenToJwtLifetime(id: string): Promise<number> {
    const ttl = this.config.oauth.jwtAccessTokenTtlMs;
    await this.tokens.update({ id }, { expiresAt: new Date(this.clock.now().getTime() + ttl) });
    return ttl / 1000;
  }

  /** Revokes every live token for this resource server (RFC 8707 audience), when it is deleted. */
  async revokeForAudience(identifier: string): Promise<void> {
    const rows = await this.tokens.find({ select: { id: true }, where: { audience: ArrayContains([identifier]), revokedAt: IsNull() } });
    await this.revoke(rows.map((r) => r.id));
  }

  async revoke(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.tokens.update({ id: In(ids), revokedAt: IsNull() }, { revokedAt: this.clock.now() });
    await this.verifier.forgetCredentials(ids);
  }

  /** Revokes every token a user gave an application (when they revoke its access). */
  async revokeForUserAndApplication(userId: string, applicationId: string): Promise<void> {
    const rows = await this.tokens.find({ select: { id: true }, where: { userId, applicationId, revokedAt: IsNull() } });
    await this.revoke(rows.map((r) => r.id));
  }
}

/** Whether a JWT's `aud` is exactly the audience recorded for its row (empty: Agora's API, BASE_URL). */
function sameAudience(claimed: readonly string[], recorded: readonly string[], agora: string): boolean {
  const expected = new Set(recorded.length === 0 ? [agora] : recorded);
  return claimed.length === expected.size && claimed.every((a) => expected.has(a));
}
