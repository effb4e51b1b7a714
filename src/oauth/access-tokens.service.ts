import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { CredentialVerifier, TokenVerifier } from '../auth/credential-verifier.js';
import { CredentialRow, Principal, toPrincipal } from '../auth/principal.js';
import { generateSecret, hashSecret, isWellFormedSecret, SecretPrefix } from '../auth/secret-token.js';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { AccessTokenEntity } from './access-token.entity.js';

interface TokenRow extends CredentialRow {
  id: string;
  created_at: Date;
  expires_at: Date;
  client_id: string;
}

const LOOKUP_SQL = `
  SELECT t.id, t.scopes, t.created_at, t.expires_at, a.client_id, u.id AS user_id, u.username, u.name, u.email,
         u.email_verified_at IS NOT NULL AS email_verified
    FROM oauth_access_tokens t
    JOIN oauth_applications a ON a.id = t.application_id
    JOIN users u ON u.id = t.user_id
   WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > $2 AND u.state = 'active'`;

export interface ActiveToken {
  principal: Principal;
  issuedAt: Date;
  expiresAt: Date;
}

/** Opaque OAuth access tokens: issued by the token endpoint, accepted as `Authorization: Bearer`. */
@Injectable()
export class AccessTokensService implements TokenVerifier, OnModuleInit {
  readonly prefix = SecretPrefix.oauthAccessToken;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly verifier: CredentialVerifier,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.verifier.register(this);
  }

  /**
   * A new token's values, for the caller to store (the token exchange writes it in the same statement
   * that consumes the code). The secret is returned only here; the database gets its hash.
   */
  prepare(): {
    id: string;
    token: string;
    tokenHash: string;
    expiresAt: Date;
    expiresIn: number;
  } {
    const token = generateSecret(SecretPrefix.oauthAccessToken);
    const ttl = this.config.oauth.accessTokenTtlMs;
    return {
      id: randomUUID(),
      token,
      tokenHash: hashSecret(token),
      expiresAt: new Date(this.clock.now().getTime() + ttl),
      expiresIn: ttl / 1000,
    };
  }

  async verify(token: string, tokenHash: string): Promise<Principal | null> {
    return (await this.findActive(token, tokenHash))?.principal ?? null;
  }

  /** The live token with this value, if any (for introspection and revocation). */
  async findActive(token: string, tokenHash = hashSecret(token)): Promise<ActiveToken | null> {
    if (!isWellFormedSecret(token, SecretPrefix.oauthAccessToken)) return null;
    const rows: TokenRow[] = await this.dataSource.query(LOOKUP_SQL, [tokenHash, this.clock.now()]);
    const row = rows[0];
    if (!row) return null;
    return {
      principal: toPrincipal(row, { kind: 'oauth_access_token', id: row.id, clientId: row.client_id, expiresAt: row.expires_at }),
      issuedAt: row.created_at,
      expiresAt: row.expires_at,
    };
  }

  async revoke(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.dataSource
      .createQueryBuilder()
      .update(AccessTokenEntity)
      .set({ revokedAt: this.clock.now() })
      .where('id IN (:...ids) AND revoked_at IS NULL', { ids })
      .execute();
    await this.verifier.forgetCredentials(ids);
  }

  /** Revokes every token a user gave an application (when they revoke its access). */
  async revokeForUserAndApplication(userId: string, applicationId: string): Promise<void> {
    const rows: { id: string }[] = await this.dataSource.query(
      'SELECT id FROM oauth_access_tokens WHERE user_id = $1 AND application_id = $2 AND revoked_at IS NULL',
      [userId, applicationId],
    );
    await this.revoke(rows.map((r) => r.id));
  }
}
