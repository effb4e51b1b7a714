import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { randomUUID } from 'node:crypto';
import { generateSecret, hashSecret, isWellFormedSecret, SecretPrefix } from '../../auth/secret-token.js';
import { Clock } from '../../clock/clock.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { purgeInBatches } from '../../database/batched-purge.js';
import { PreparedStatements, Statement } from '../../database/prepared-statements.js';
import { AuthMethod, toAmr } from '../../auth/authentication-methods.js';
import { EntityTable } from '../../database/entity-table.js';
import { UsersService, type UserClaimsRow } from '../../users/users.service.js';
import { AccessTokenFormat, ApplicationEntity } from '../clients/application.entity.js';
import { AccessTokenEntity } from './access-token.entity.js';
import { AccessTokensService } from './access-tokens.service.js';
import { RefreshTokenEntity } from './refresh-token.entity.js';
import { narrowResources } from '../resource-indicator.js';
import { OAuthError } from '../oauth.errors.js';
import type { ClaimsUser } from '../keys/id-token.service.js';

export type Rotation =
  | {
      ok: true;
      /** The new refresh token, shown once. */
      refreshToken: string;
      accessToken: string;
      accessTokenId: string;
      expiresIn: number;
      /** The access token's scopes (what was asked for, or everything the refresh token carries). */
      scopes: string[];
      /** The access token's audience (RFC 8707): the resources asked for, or every one the family was authorized for. */
      audience: string[];
      authTime: Date;
      /** How the user signed in for the authorization that started the family. */
      amr: AuthMethod[];
      /** The browser session of that authorization (the id_token's `sid`), if it came from one. */
      sessionId: string | null;
      user: ClaimsUser;
    }
  | { ok: false; error: 'invalid_grant' | 'invalid_scope' | 'invalid_target'; reason: string };

export interface ActiveRefreshToken {
  clientId: string;
  scopes: string[];
  user: { id: string; username: string };
  issuedAt: Date;
  expiresAt: Date;
}

/**
 * Refresh tokens (RFC 6749 §6) with rotation and reuse detection (RFC 9700 §4.14.2): each use
 * replaces the token by a successor of the same family, and a used token presented again revokes the
 * whole family and every access token issued from it. A token expires when unused for the idle
 * lifetime, and every token of a family when the family reaches its absolute lifetime.
 */
@Injectable()
export class RefreshTokensService {
  constructor(
    private readonly statements: PreparedStatements,
    private readonly accessTokens: AccessTokensService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() dataSource: DataSource,
    users: UsersService,
  ) {
    const table = EntityTable.of(dataSource, RefreshTokenEntity, 'r');
    this.rotated = table.pick(...ROTATION_READ);
    this.active = table.pick('userId', 'scopes', 'createdAt', 'expiresAt');
    const applications = EntityTable.of(dataSource, ApplicationEntity, 'a');
    const issuedTokens = EntityTable.of(dataSource, AccessTokenEntity, 't');
    // $1 id (also the family's), $2 hash, $3 application, $4 user, $5 scopes (space-separated), $6 auth time,
    // $7 access token, $8 now, $9 idle expiry, $10 family expiry, $11 amr, $12 resources (RFC 8707), $13 browser session.
    const firstOfFamily = table.values({
      id: '$1',
      tokenHash: '$2',
      familyId: '$1',
      applicationId: '$3',
      userId: '$4',
      scopes: `string_to_array($5::text, ' ')`,
      authTime: '$6',
      amr: '$11::text[]',
      accessTokenId: '$7',
      createdAt: '$8',
      expiresAt: '$9',
      familyExpiresAt: '$10',
      resources: '$12::text[]',
      sessionId: '$13::uuid',
    });
    this.insertion = {
      name: 'oauth_insert_refresh_token',
      text: `INSERT INTO oauth_refresh_tokens (${firstOfFamily.columns}) VALUES (${firstOfFamily.values})`,
    };
    // A column of `used`, the token the rotation uses: it returns INHERITED, what its successors take of it.
    const used = (property: (typeof INHERITED)[number]) => table.column(property);
    const token = issuedTokens.values({
      id: '$5',
      tokenHash: '$6',
      applicationId: '$3',
      userId: used('userId'),
      scopes: `COALESCE(string_to_array($4::text, ' '), ${used('scopes')})`,
      audience: `CASE WHEN cardinality($11::text[]) = 0 THEN ${used('resources')} ELSE $11::text[] END`,
      createdAt: '$2',
      expiresAt: '$7',
    });
    const successor = table.values({
      id: '$8',
      tokenHash: '$9',
      familyId: used('familyId'),
      applicationId: '$3',
      userId: used('userId'),
      scopes: used('scopes'),
      authTime: used('authTime'),
      amr: used('amr'),
      accessTokenId: '(SELECT id FROM token)',
      createdAt: '$2',
      expiresAt: `LEAST($10::timestamptz, ${used('familyExpiresAt')})`,
      familyExpiresAt: used('familyExpiresAt'),
      resources: used('resources'),
      sessionId: used('sessionId'),
    });
    // $1 token hash, $2 now, $3 application id, $4 requested scopes (space-separated, or null for all),
    // $5 access token id, $6 its hash, $7 its expiry, $8 successor id, $9 its hash, $10 its idle expiry,
    // $11 the resources asked for (RFC 8707 §2.2: within the family's, whose empty list is Agora's API, $12).
    // Both new rows and the old one's use are written by one statement (foreign keys are checked at its end).
    this.rotation = {
      name: 'oauth_rotate_refresh_token',
      text: `
  WITH old AS (
    SELECT ${this.rotated.select}, ${users.claimsAs('u')}
      FROM oauth_refresh_tokens r JOIN users u ON u.id = r.user_id
     WHERE r.token_hash = $1
  ), used AS (
    UPDATE oauth_refresh_tokens r SET used_at = $2
     WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.revoked_at IS NULL AND r.expires_at > $2 AND r.application_id = $3
       AND ($4::text IS NULL OR string_to_array($4::text, ' ') <@ r.scopes)
       AND $11::text[] <@ (CASE WHEN cardinality(r.resources) = 0 THEN ARRAY[$12::text] ELSE r.resources END)
       AND EXISTS (SELECT 1 FROM old WHERE old.user_state = 'active')
    RETURNING ${table.list(...INHERITED)}
  ), token AS (
    INSERT INTO oauth_access_tokens (${token.columns})
    SELECT ${token.values} FROM used
    RETURNING id
  ), successor AS (
    INSERT INTO oauth_refresh_tokens (${successor.columns})
    SELECT ${successor.values} FROM used
    RETURNING id
  )
  SELECT old.*, EXISTS (SELECT 1 FROM successor) AS issued FROM old`,
    };
    this.findLive = {
      name: 'oauth_find_refresh_token',
      text: `SELECT ${this.active.select}, a.${applications.column('clientId')} AS client_id, ${users.claimsAs('u')}
           FROM oauth_refresh_tokens r
           JOIN oauth_applications a ON a.id = r.application_id
           JOIN users u ON u.id = r.user_id
          WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.revoked_at IS NULL AND r.expires_at > $2
            AND r.application_id = $3 AND u.state = 'active'`,
    };
  }

  /** What a rotation reads of the token presented. */
  private readonly rotated: EntityTable<Pick<RefreshTokenEntity, (typeof ROTATION_READ)[number]>, RefreshTokenEntity>;
  /** What introspection reads of a live token. */
  private readonly active: EntityTable<Pick<RefreshTokenEntity, 'userId' | 'scopes' | 'createdAt' | 'expiresAt'>, RefreshTokenEntity>;
  private readonly insertion: Statement;
  private readonly rotation: Statement;
  private readonly findLive: Statement;

  /** Starts a family, beside the access token an authorization code was just exchanged for. */
  async issue(grant: {
    applicationId: string;
    userId: string;
    scopes: string[];
    authTime: Date;
    amr: readonly AuthMethod[];
    accessTokenId: string;
    /** What the family is authorized for (RFC 8707); empty, Agora's API. */
    resources?: readonly string[];
    /** The browser session the authorization came from: every successor keeps it (the id_token's `sid`). */
    sessionId?: string | null;
  }): Promise<string> {
    const now = this.clock.now();
    const token = generateSecret(SecretPrefix.oauthRefreshToken);
    const familyExpiresAt = new Date(now.getTime() + this.config.oauth.refreshTokenAbsoluteMs);
    await this.statements.query(this.insertion, [
      randomUUID(),
      hashSecret(token),
      grant.applicationId,
      grant.userId,
      grant.scopes.join(' '),
      grant.authTime,
      grant.accessTokenId,
      now,
      this.idleExpiry(now, familyExpiresAt),
      familyExpiresAt,
      [...grant.amr],
      [...(grant.resources ?? [])],
      grant.sessionId ?? null,
    ]);
    return token;
  }

  /**
   * Exchanges a refresh token for a new access token and a successor refresh token. One statement
   * checks the token and, if it is live, this client's, of an active user and covers the requested
   * scopes, marks it used and stores both successors: `used_at IS NULL` in its UPDATE is the arbiter,
   * so of concurrent uses of one token exactly one succeeds. What the token was before the statement
   * explains any failure; a token used before (also by a concurrent request that won) revokes its family.
   * The new access token is of the client's `format`.
   */
  async rotate(
    applicationId: string,
    refreshToken: string,
    requestedScopes: string[] | null,
    format: AccessTokenFormat = 'opaque',
    requestedResources: readonly string[] = [],
  ): Promise<Rotation> {
    if (!isWellFormedSecret(refreshToken, SecretPrefix.oauthRefreshToken)) return invalidGrant('The refresh token is unknown');
    const now = this.clock.now();
    const tokenHash = hashSecret(refreshToken);
    const access = this.accessTokens.prepare(format);
    const successor = generateSecret(SecretPrefix.oauthRefreshToken);
    const [row] = await this.statements.query<TokenRow>(this.rotation, [
      tokenHash,
      now,
      applicationId,
      requestedScopes?.join(' ') ?? null,
      access.id,
      access.tokenHash,
      access.expiresAt,
      randomUUID(),
      hashSecret(successor),
      new Date(now.getTime() + this.config.oauth.refreshTokenIdleMs),
      [...requestedResources],
      this.config.baseUrl,
    ]);
    if (!row) return invalidGrant('The refresh token is unknown');
    const old = this.rotated.map(row);
    if (old.applicationId !== applicationId) return invalidGrant('The refresh token was issued to another client');
    if (old.revokedAt) return invalidGrant('The refresh token has been revoked');
    if (old.usedAt) return this.reused(old.familyId);
    if (old.expiresAt <= now) {
      return invalidGrant(
        old.familyExpiresAt <= now
          ? 'The refresh token has expired (the sign-in it comes from is too old: sign in again)'
          : 'The refresh token has expired (unused for too long)',
      );
    }
    if (row.user_state !== 'active') return invalidGrant('The user is no longer active');
    const notGranted = (requestedScopes ?? []).filter((s) => !old.scopes.includes(s));
    if (notGranted.length > 0) {
      return { ok: false, error: 'invalid_scope', reason: `The refresh token was not granted: ${notGranted.join(' ')}` };
    }
    let audience: string[];
    try {
      audience = narrowResources(old.resources, requestedResources, this.config.baseUrl);
    } catch (err) {
      // The token stays unused: the client may ask again within what was authorized.
      if (err instanceof OAuthError) return { ok: false, error: 'invalid_target', reason: err.description };
      throw err;
    }
    // Used by another request between this statement's snapshot and its update: a reuse as well.
    if (!row.issued) return this.reused(old.familyId);
    return {
      ok: true,
      refreshToken: successor,
      accessToken: access.token,
      accessTokenId: access.id,
      expiresIn: access.expiresIn,
      scopes: requestedScopes ?? old.scopes,
      audience,
      authTime: old.authTime,
      amr: toAmr(old.amr),
      sessionId: old.sessionId,
      user: { id: old.userId, username: row.username, name: row.name, email: row.email, emailVerified: row.email_verified },
    };
  }

  /** The live refresh token with this value, if it is this client's (for introspection). */
  async findActive(token: string, applicationId: string): Promise<ActiveRefreshToken | null> {
    if (!isWellFormedSecret(token, SecretPrefix.oauthRefreshToken)) return null;
    const [row] = await this.statements.query<ActiveRow>(this.findLive, [hashSecret(token), this.clock.now(), applicationId]);
    if (!row) return null;
    const found = this.active.map(row);
    return {
      clientId: row.client_id,
      scopes: found.scopes,
      user: { id: found.userId, username: row.username },
      issuedAt: found.createdAt,
      expiresAt: found.expiresAt,
    };
  }

  /**
   * Revocation by the client (RFC 7009 §2.1): the token's whole family and the access tokens issued
   * from it. False when the value is not one of this client's refresh tokens (the caller answers alike).
   */
  async revokeForClient(token: string, applicationId: string): Promise<boolean> {
    if (!isWellFormedSecret(token, SecretPrefix.oauthRefreshToken)) return false;
    const [row] = await this.statements.query<{ family_id: string }>(FIND_FAMILY, [hashSecret(token), applicationId]);
    if (!row) return false;
    await this.revokeFamily(row.family_id);
    return true;
  }

  /**
   * Revokes every family authorized for this resource server (RFC 8707), and their access tokens, when
   * it is deleted: no refresh brings back a token for it.
   */
  async revokeForResource(identifier: string): Promise<void> {
    const rows = await this.statements.query<{ family_id: string }>(FAMILIES_FOR_RESOURCE, [identifier]);
    for (const { family_id } of rows) await this.revokeFamily(family_id);
  }

  /** Revokes the family that an access token (the one of a code exchange, say) belongs to, if any. */
  async revokeFamilyOf(accessTokenId: string): Promise<void> {
    const rows = await this.statements.query<{ family_id: string }>(FIND_FAMILY_OF_ACCESS_TOKEN, [accessTokenId]);
    for (const { family_id } of rows) await this.revokeFamily(family_id);
  }

  /** Revokes every refresh token a user gave an application, and the access tokens issued from them. */
  async revokeForUserAndApplication(userId: string, applicationId: string): Promise<void> {
    // Twice, as for a family: a rotation in flight may store a successor the first snapshot missed.
    const rows: { access_token_id: string | null }[] = [];
    for (let i = 0; i < 2; i++) {
      rows.push(
        ...(await this.statements.query<{ access_token_id: string | null }>(REVOKE_FOR_USER_AND_APPLICATION, [
          userId,
          applicationId,
          this.clock.now(),
        ])),
      );
    }
    await this.accessTokens.revoke(accessTokenIds(rows));
  }

  /**
   * Deletes families that ended more than a day ago: no live token left (expired, or every token
   * used), and nothing revoked within the day. Used tokens of a living family stay, to recognise a reuse.
   */
  async purgeExpired(): Promise<number> {
    const before = new Date(this.clock.now().getTime() - RETENTION_MS);
    return purgeInBatches((text, values) => this.statements.run(text, values), 'oauth_refresh_tokens', ENDED_FAMILY, [before]);
  }

  private async reused(familyId: string): Promise<Rotation> {
    await this.revokeFamily(familyId);
    return invalidGrant('The refresh token was already used; every token issued from the same authorization is revoked');
  }

  private async revokeFamily(familyId: string): Promise<void> {
    // Twice: a rotation that held the live token's row lock while the first statement ran stores a
    // successor the first statement's snapshot does not see; the second statement sees and revokes it.
    await this.statements.query(REVOKE_FAMILY, [familyId, this.clock.now()]);
    const rows = await this.statements.query<{ access_token_id: string | null }>(REVOKE_FAMILY, [familyId, this.clock.now()]);
    await this.accessTokens.revoke(accessTokenIds(rows));
  }

  private idleExpiry(now: Date, familyExpiresAt: Date): Date {
    return new Date(Math.min(now.getTime() + this.config.oauth.refreshTokenIdleMs, familyExpiresAt.getTime()));
  }
}

const RETENTION_MS = 24 * 3_600_000;

function invalidGrant(reason: string): Rotation {
  return { ok: false, error: 'invalid_grant', reason };
}

function accessTokenIds(rows: { access_token_id: string | null }[]): string[] {
  return [...new Set(rows.flatMap((r) => (r.access_token_id ? [r.access_token_id] : [])))];
}

/** The token's columns (`rotated`), its user's claims, and whether this statement used it and stored its successors. */
interface TokenRow extends UserClaimsRow, Record<string, unknown> {
  issued: boolean;
}

/** A live token's columns (`active`), its client's id and its user's claims. */
interface ActiveRow extends UserClaimsRow, Record<string, unknown> {
  client_id: string;
}

/** What a successor takes of the token it replaces, and the new access token of its user, scopes and resources. */
const INHERITED = [
  'familyId',
  'userId',
  'scopes',
  'authTime',
  'amr',
  'familyExpiresAt',
  'resources',
  'sessionId',
] as const satisfies readonly (keyof RefreshTokenEntity)[];

/** What a rotation reads of the token presented (not its hash: the statement found it by it). */
const ROTATION_READ = [
  'familyId',
  'applicationId',
  'userId',
  'scopes',
  'resources',
  'authTime',
  'amr',
  'expiresAt',
  'familyExpiresAt',
  'usedAt',
  'revokedAt',
  'sessionId',
] as const satisfies readonly (keyof RefreshTokenEntity)[];

const FIND_FAMILY: Statement = {
  name: 'oauth_find_refresh_token_family',
  text: `SELECT family_id FROM oauth_refresh_tokens WHERE token_hash = $1 AND application_id = $2`,
};

const FAMILIES_FOR_RESOURCE: Statement = {
  name: 'oauth_refresh_token_families_for_resource',
  text: `SELECT DISTINCT family_id FROM oauth_refresh_tokens WHERE $1 = ANY(resources) AND revoked_at IS NULL`,
};

const FIND_FAMILY_OF_ACCESS_TOKEN: Statement = {
  name: 'oauth_find_refresh_token_family_of_access_token',
  text: `SELECT DISTINCT family_id FROM oauth_refresh_tokens WHERE access_token_id = $1`,
};

// Every access token issued from the family, also those of tokens revoked before (a revocation that
// raced with a rotation may have missed the newest access token).
const REVOKE_FAMILY: Statement = {
  name: 'oauth_revoke_refresh_token_family',
  text: `
  WITH revoked AS (
    UPDATE oauth_refresh_tokens SET revoked_at = $2 WHERE family_id = $1 AND revoked_at IS NULL RETURNING id
  )
  SELECT access_token_id FROM oauth_refresh_tokens WHERE family_id = $1 AND access_token_id IS NOT NULL`,
};

// Every statement here ends in a SELECT: the embedded database's driver answers a bare UPDATE or
// DELETE … RETURNING with its row count beside the rows.
const REVOKE_FOR_USER_AND_APPLICATION: Statement = {
  name: 'oauth_revoke_refresh_tokens_of_grant',
  text: `WITH revoked AS (
           UPDATE oauth_refresh_tokens SET revoked_at = $3
            WHERE user_id = $1 AND application_id = $2 AND revoked_at IS NULL
           RETURNING access_token_id)
         SELECT access_token_id FROM revoked`,
};

/** A token (`t`) of a family with no live token left and nothing revoked after $1. */
const ENDED_FAMILY = `NOT EXISTS (
    SELECT 1 FROM oauth_refresh_tokens f
     WHERE f.family_id = t.family_id
       AND ((f.used_at IS NULL AND f.revoked_at IS NULL AND f.expires_at > $1) OR f.revoked_at > $1))`;
