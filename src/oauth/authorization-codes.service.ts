import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { Repository } from 'typeorm';
import { hashSecret } from '../auth/secret-token.js';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { AuthorizationCodeEntity } from './authorization-code.entity.js';
import { AuthorizationRequest } from './authorization-request.js';

/** Issues single-use authorization codes bound to everything the token endpoint must check. */
@Injectable()
export class AuthorizationCodesService {
  constructor(
    @InjectRepository(AuthorizationCodeEntity) private readonly codes: Repository<AuthorizationCodeEntity>,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async issue(request: AuthorizationRequest, userId: string, authTime: Date): Promise<string> {
    const code = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    await this.codes.insert({
      codeHash: hashSecret(code),
      applicationId: request.application.id,
      userId,
      redirectUri: request.redirectUri,
      scopes: request.scopes,
      nonce: request.nonce ?? null,
      codeChallenge: request.codeChallenge,
      authTime,
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.config.oauth.codeTtlMs),
    });
    return code;
  }
}
