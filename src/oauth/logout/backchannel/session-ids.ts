import { Inject, Injectable } from '@nestjs/common';
import { createHmac } from 'node:crypto';
import { APP_CONFIG } from '../../../config/config.module.js';
import type { AppConfig } from '../../../config/config.schema.js';
import { deriveKey } from '../../../config/key-encryption.js';

/**
 * The OpenID Connect `sid` of a browser session (Front-/Back-Channel Logout §2.1): an HMAC-SHA256 of the
 * session's id under a key derived from SECRET_KEY, so relying parties never see the row's id (which
 * the security page uses to end it), and every relying party sees the same `sid` for one session.
 */
@Injectable()
export class SessionIds {
  private readonly key: Buffer;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    if (!config.secretKey) throw new Error('SECRET_KEY is not resolved: OpenID Connect session ids need it');
    this.key = deriveKey(config.secretKey, 'oidc-session-ids');
  }

  sidOf(sessionId: string): string {
    return createHmac('sha256', this.key).update(sessionId).digest('base64url');
  }
}
