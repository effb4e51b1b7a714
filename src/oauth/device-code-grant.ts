import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { hashSecret, isWellFormedSecret, SecretPrefix } from '../auth/secret-token.js';
import { Clock } from '../clock/clock.js';
import { toAmr } from '../sessions/authentication-methods.js';
import { AccessTokensService } from './access-tokens.service.js';
import { ApplicationEntity } from './application.entity.js';
import type { TokenRequestParams } from './client-authentication.js';
import { IdTokenService } from './id-token.service.js';
import { OAuthError } from './oauth.errors.js';
import { RefreshTokensService } from './refresh-tokens.service.js';
import type { TokenResponse } from './token-exchange.service.js';

export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/** RFC 8628 §3.5: a polling client that comes too early has its interval raised by this much. */
const SLOW_DOWN_SECONDS = 5;

interface DeviceRow {
  id: string;
  application_id: string;
  scopes: string[];
  status: 'pending' | 'approved' | 'denied';
  user_id: string | null;
  auth_time: Date | null;
  amr: string[] | null;
  interval_seconds: number;
  last_polled_at: Date | null;
  expires_at: Date;
  consumed_at: Date | null;
  user_state: string | null;
  username: string | null;
  name: string | null;
  email: string | null;
  email_verified: boolean | null;
}

type Poll = { issued: { accessToken: string; accessTokenId: string; expiresIn: number; row: DeviceRow } } | { refused: OAuthError };

/**
 * The device code grant at the token endpoint (RFC 8628 §3.4–3.5): `authorization_pending` until the
 * user decides, `slow_down` to a client polling faster than its interval (which then grows),
 * `access_denied`, `expired_token`; once approved, one token, to the client the code was issued to.
 * Each poll reads and updates the authorization under its row lock, so of concurrent polls of an
 * approved code exactly one gets the token.
 */
@Injectable()
export class DeviceCodeGrant {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly accessTokens: AccessTokensService,
    private readonly idTokens: IdTokenService,
    private readonly clock: Clock,
    private readonly refreshTokens: RefreshTokensService,
  ) {}

  async exchange(application: ApplicationEntity, params: TokenRequestParams): Promise<TokenResponse> {
    if (!params.device_code) throw new OAuthError('invalid_request', 'device_code is required');
    if (!isWellFormedSecret(params.device_code, SecretPrefix.oauthDeviceCode))
      throw new OAuthError('invalid_grant', 'The device code is unknown');
    const poll = await this.poll(application, hashSecret(params.device_code));
    if ('refused' in poll) throw poll.refused;
    return this.tokenResponse(application, poll.issued);
  }

  private poll(application: ApplicationEntity, deviceCodeHash: string): Promise<Poll> {
    const now = this.clock.now();
    return this.dataSource.transaction(async (manager): Promise<Poll> => {
      const [row] = (await manager.query(
        `SELECT d.id, d.application_id, d.scopes, d.status, d.user_id, d.auth_time, d.amr, d.interval_seconds, d.last_polled_at,
                d.expires_at, d.consumed_at, u.state AS user_state, u.username, u.name, u.email,
                u.email_verified_at IS NOT NULL AS email_verified
           FROM oauth_device_authorizations d LEFT JOIN users u ON u.id = d.user_id
          WHERE d.device_code_hash = $1
            FOR UPDATE OF d`,
        [deviceCodeHash],
      )) as DeviceRow[];
      // Another client's device code is answered as an unknown one, and its polling state is left alone.
      if (!row || row.application_id !== application.id) return refuse('invalid_grant', 'The device code is unknown');
      if (row.consumed_at) return refuse('invalid_grant', 'The device code was already used');
      if (row.expires_at <= now) return refuse('expired_token', 'The device code has expired: start a new device authorization');
      if (row.status === 'denied') return refuse('access_denied', 'The user denied the request');
      if (row.status === 'approved') {
        if (row.user_state !== 'active') return refuse('invalid_grant', 'The user is no longer active');
        const issued = this.accessTokens.prepare();
        await manager.query(
          `INSERT INTO oauth_access_tokens (id, token_hash, application_id, user_id, scopes, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [issued.id, issued.tokenHash, application.id, row.user_id, row.scopes, now, issued.expiresAt],
        );
        await manager.query(
          `UPDATE oauth_device_authorizations SET consumed_at = $2, access_token_id = $3, last_polled_at = $2 WHERE id = $1`,
          [row.id, now, issued.id],
        );
        return { issued: { accessToken: issued.token, accessTokenId: issued.id, expiresIn: issued.expiresIn, row } };
      }
      const early = row.last_polled_at !== null && now.getTime() - row.last_polled_at.getTime() < row.interval_seconds * 1000;
      const interval = early ? row.interval_seconds + SLOW_DOWN_SECONDS : row.interval_seconds;
      await manager.query(`UPDATE oauth_device_authorizations SET last_polled_at = $2, interval_seconds = $3 WHERE id = $1`, [
        row.id,
        now,
        interval,
      ]);
      return early
        ? refuse('slow_down', `Polled too soon: wait at least ${interval} seconds between requests`)
        : refuse('authorization_pending', 'The user has not yet approved the request');
    });
  }

  /** The token response, built in this one place (as the authorization code grant builds its own). */
  private async tokenResponse(
    application: ApplicationEntity,
    issued: { accessToken: string; accessTokenId: string; expiresIn: number; row: DeviceRow },
  ): Promise<TokenResponse> {
    const { row } = issued;
    const amr = toAmr(row.amr ?? ['pwd']);
    const response: TokenResponse = {
      access_token: issued.accessToken,
      token_type: 'Bearer',
      expires_in: issued.expiresIn,
      scope: row.scopes.join(' '),
    };
    if (row.scopes.includes('openid')) {
      response.id_token = await this.idTokens.sign({
        user: { id: row.user_id!, username: row.username!, name: row.name!, email: row.email!, emailVerified: row.email_verified === true },
        clientId: application.clientId,
        scopes: row.scopes,
        authTime: row.auth_time!,
        amr,
        nonce: null,
      });
    }
    if (row.scopes.includes('offline_access')) {
      response.refresh_token = await this.refreshTokens.issue({
        applicationId: application.id,
        userId: row.user_id!,
        scopes: row.scopes,
        authTime: row.auth_time!,
        amr,
        accessTokenId: issued.accessTokenId,
      });
    }
    return response;
  }
}

function refuse(code: ConstructorParameters<typeof OAuthError>[0], description: string): Poll {
  return { refused: new OAuthError(code, description) };
}
