import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { generateSecret, hashSecret, isWellFormedSecret, SecretPrefix } from '../auth/secret-token.js';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { purgeInBatches } from '../database/batched-purge.js';
import { PreparedStatements, Statement } from '../database/prepared-statements.js';
import { AuthMethod, toAmr } from '../sessions/authentication-methods.js';
import { AccessTokensService } from './access-tokens.service.js';
import type { ClaimsUser } from './id-token.service.js';

export type Rotation =
  | {
      ok: true;
      /** The new refresh token, shown once. */
      refreshToken: string;
      accessToken: string;
      expiresIn: number;
      /** The access token's scopes (what was asked for, or everything the refresh token carries). */
      scopes: string[];
      authTime: Date;
      /** How the user signed in for the authorization that started the family. */
      amr: AuthMethod[];
      user: ClaimsUser;
    }
  | { ok: false; error: 'invalid_grant' | 'invalid_scope'; reason: string };

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
  ) {}

  /** Starts a family, beside the access token an authorization code was just exchanged for. */
  async issue(grant: {
    applicationId: string;
    userId: string;
    scopes: string[];
    authTime: Date;
    amr: readonly AuthMethod[];
    accessTokenId: string;
  }): Promise<string> {
    const now = this.clock.now();
    const token = generateSecret(SecretPrefix.oauthRefreshToken);
    const familyExpiresAt = new Date(now.getTime() + this.config.oauth.refreshTokenAbsoluteMs);
    await this.statements.query(INSERT, [
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
    ]);
    return token;
  }

  /**
   * Exchanges a refresh token for a new access token and a successor refresh token. One statement
   * checks the token and, if it is live, this client's, of an active user and covers the requested
   * scopes, marks it used and stores both successors: `used_at IS NULL` in its UPDATE is the arbiter,
   * so of concurrent uses of one token exactly one succeeds. What the token was before the statement
   * explains any failure; a token used before (also by a concurrent request that won) revokes its family.
   */
  async rotate(applicationId: string, refreshToken: string, requestedScopes: string[] | null): Promise<Rotation> {
    if (!isWellFormedSecret(refreshToken, SecretPrefix.oauthRefreshToken)) return invalidGrant('The refresh token is unknown');
    const now = this.clock.now();
    const tokenHash = hashSecret(refreshToken);
    const access = this.accessTokens.prepare();
    const successor = generateSecret(SecretPrefix.oauthRefreshToken);
    const [old] = await this.statements.query<TokenRow>(ROTATE, [
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
    ]);
    if (!old) return invalidGrant('The refresh token is unknown');
    if (old.application_id !== applicationId) return invalidGrant('The refresh token was issued to another client');
    if (old.revoked_at) return invalidGrant('The refresh token has been revoked');
    if (old.used_at) return this.reused(old.family_id);
    if (old.expires_at <= now) {
      return invalidGrant(
        old.family_expires_at <= now
          ? 'The refresh token has expired (the sign-in it comes from is too old: sign in again)'
          : 'The refresh token has expired (unused for too long)',
      );
    }
    if (old.user_state !== 'active') return invalidGrant('The user is no longer active');
    const notGranted = (requestedScopes ?? []).filter((s) => !old.scopes.includes(s));
    if (notGranted.length > 0) {
      return { ok: false, error: 'invalid_scope', reason: `The refresh token was not granted: ${notGranted.join(' ')}` };
    }
    // Used by another request between this statement's snapshot and its update: a reuse as well.
    if (!old.issued) return this.reused(old.family_id);
    return {
      ok: true,
      refreshToken: successor,
      accessToken: access.token,
      expiresIn: access.expiresIn,
      scopes: requestedScopes ?? old.scopes,
      authTime: old.auth_time,
      amr: toAmr(old.amr),
      user: { id: old.user_id, username: old.username, name: old.name, email: old.email, emailVerified: old.email_verified },
    };
  }

  /** The live refresh token with this value, if it is this client's (for introspection). */
  async findActive(token: string, applicationId: string): Promise<ActiveRefreshToken | null> {
    if (!isWellFormedSecret(token, SecretPrefix.oauthRefreshToken)) return null;
    const [row] = await this.statements.query<ActiveRow>(FIND_ACTIVE, [hashSecret(token), this.clock.now(), applicationId]);
    if (!row) return null;
    return {
      clientId: row.client_id,
      scopes: row.scopes,
      user: { id: row.user_id, username: row.username },
      issuedAt: row.created_at,
      expiresAt: row.expires_at,
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

interface TokenRow extends Record<string, unknown> {
  family_id: string;
  application_id: string;
  user_id: string;
  scopes: string[];
  auth_time: Date;
  amr: string[];
  expires_at: Date;
  family_expires_at: Date;
  used_at: Date | null;
  revoked_at: Date | null;
  user_state: string;
  username: string;
  name: string;
  email: string;
  email_verified: boolean;
  /** Whether this statement used the token and stored its successors. */
  issued: boolean;
}

interface ActiveRow extends Record<string, unknown> {
  client_id: string;
  scopes: string[];
  user_id: string;
  username: string;
  created_at: Date;
  expires_at: Date;
}

// $1 id (also the family's), $2 hash, $3 application, $4 user, $5 scopes (space-separated), $6 auth time,
// $7 access token, $8 now, $9 idle expiry, $10 family expiry, $11 amr.
const INSERT: Statement = {
  name: 'oauth_insert_refresh_token',
  text: `INSERT INTO oauth_refresh_tokens
           (id, token_hash, family_id, application_id, user_id, scopes, auth_time, amr, access_token_id, created_at, expires_at,
            family_expires_at)
         VALUES ($1, $2, $1, $3, $4, string_to_array($5::text, ' '), $6, $11::text[], $7, $8, $9, $10)`,
};

// $1 token hash, $2 now, $3 application id, $4 requested scopes (space-separated, or null for all),
// $5 access token id, $6 its hash, $7 its expiry, $8 successor id, $9 its hash, $10 its idle expiry.
// Both new rows and the old one's use are written by one statement (foreign keys are checked at its end).
const ROTATE: Statement = {
  name: 'oauth_rotate_refresh_token',
  text: `
  WITH old AS (
    SELECT r.family_id, r.application_id, r.user_id, r.scopes, r.auth_time, r.amr, r.expires_at, r.family_expires_at, r.used_at,
           r.revoked_at, u.state AS user_state, u.username, u.name, u.email, u.email_verified_at IS NOT NULL AS email_verified
      FROM oauth_refresh_tokens r JOIN users u ON u.id = r.user_id
     WHERE r.token_hash = $1
  ), used AS (
    UPDATE oauth_refresh_tokens r SET used_at = $2
     WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.revoked_at IS NULL AND r.expires_at > $2 AND r.application_id = $3
       AND ($4::text IS NULL OR string_to_array($4::text, ' ') <@ r.scopes)
       AND EXISTS (SELECT 1 FROM old WHERE old.user_state = 'active')
    RETURNING r.family_id, r.user_id, r.scopes, r.auth_time, r.amr, r.family_expires_at
  ), token AS (
    INSERT INTO oauth_access_tokens (id, token_hash, application_id, user_id, scopes, created_at, expires_at)
    SELECT $5, $6, $3, user_id, COALESCE(string_to_array($4::text, ' '), scopes), $2, $7 FROM used
    RETURNING id
  ), successor AS (
    INSERT INTO oauth_refresh_tokens
           (id, token_hash, family_id, application_id, user_id, scopes, auth_time, amr, access_token_id, created_at, expires_at,
            family_expires_at)
    SELECT $8, $9, family_id, $3, user_id, scopes, auth_time, amr, (SELECT id FROM token), $2, LEAST($10::timestamptz, family_expires_at), family_expires_at
      FROM used
    RETURNING id
  )
  SELECT old.*, EXISTS (SELECT 1 FROM successor) AS issued FROM old`,
};

const FIND_ACTIVE: Statement = {
  name: 'oauth_find_refresh_token',
  text: `SELECT a.client_id, r.scopes, r.created_at, r.expires_at, u.id AS user_id, u.username
           FROM oauth_refresh_tokens r
           JOIN oauth_applications a ON a.id = r.application_id
           JOIN users u ON u.id = r.user_id
          WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.revoked_at IS NULL AND r.expires_at > $2
            AND r.application_id = $3 AND u.state = 'active'`,
};

const FIND_FAMILY: Statement = {
  name: 'oauth_find_refresh_token_family',
  text: `SELECT family_id FROM oauth_refresh_tokens WHERE token_hash = $1 AND application_id = $2`,
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
