import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { Repository } from 'typeorm';
import { hashSecret } from '../../auth/secret-token.js';
import { Clock } from '../../clock/clock.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { purgeInBatches, RunStatement } from '../../database/batched-purge.js';
import type { AppConfig } from '../../config/config.schema.js';
import { AuthorizationCodeEntity } from './authorization-code.entity.js';
import type { AuthMethod } from '../../auth/authentication-methods.js';
import { AuthorizationRequest } from './authorization-request.js';

/** Issues single-use authorization codes bound to everything the token endpoint must check. */
@Injectable()
export class AuthorizationCodesService {
  constructor(
    @InjectRepository(AuthorizationCodeEntity) private readonly codes: Repository<AuthorizationCodeEntity>,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * A code bound to what the user approved (client, redirect URI, scopes, resources, nonce and PKCE challenge) and
   * to how they signed in (the session's auth_time and amr, and the session itself: its `sid`, for the id_token).
   */
  async issue(
    request: Pick<AuthorizationRequest, 'application' | 'redirectUri' | 'scopes' | 'nonce' | 'codeChallenge'> &
      Partial<Pick<AuthorizationRequest, 'resources'>>,
    userId: string,
    signIn: { authTime: Date; amr: readonly AuthMethod[]; sessionId?: string },
  ): Promise<string> {
    const code = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    await this.codes.insert({
      codeHash: hashSecret(code),
      applicationId: request.application.id,
      userId,
      redirectUri: request.redirectUri,
      scopes: request.scopes,
      resources: request.resources ?? [],
      nonce: request.nonce ?? null,
      codeChallenge: request.codeChallenge,
      authTime: signIn.authTime,
      amr: [...signIn.amr],
      sessionId: signIn.sessionId ?? null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.config.oauth.codeTtlMs),
    });
    return code;
  }

  /**
   * Deletes codes and access tokens that expired more than a day ago (a consumed code is kept that
   * long so a replay is still recognised and answered by revoking its token).
   */
  async purgeExpired(): Promise<{ codes: number; accessTokens: number }> {
    const before = new Date(this.clock.now().getTime() - RETENTION_MS);
    const run: RunStatement = (text, values) => this.codes.query(text, values);
    const codes = await purgeInBatches(run, 'oauth_authorization_codes', 't.expires_at <= $1', [before]);
    const accessTokens = await purgeInBatches(run, 'oauth_access_tokens', 't.expires_at <= $1', [before]);
    return { codes, accessTokens };
  }
}

const RETENTION_MS = 24 * 3_600_000;
