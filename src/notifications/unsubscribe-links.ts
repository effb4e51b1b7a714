import { Inject, Injectable } from '@nestjs/common';
import jwt from 'jsonwebtoken';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { deriveKey } from '../config/key-encryption.js';

const AUDIENCE = 'agora:unsubscribe';

/**
 * The one-click unsubscribe link of a non-essential mail (RFC 8058): it names the user and the list,
 * signed (HMAC-SHA256 under a key derived from SECRET_KEY for this purpose only), so it works without
 * signing in and cannot be forged for someone else. It does not expire: a mail read a year later still
 * unsubscribes, as mail providers expect.
 */
@Injectable()
export class UnsubscribeLinks {
  private readonly key: Buffer;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    if (!config.secretKey) throw new Error('SECRET_KEY is not resolved: unsubscribe links need it');
    this.key = deriveKey(config.secretKey, 'mail-unsubscribe');
  }

  url(userId: string): string {
    const token = jwt.sign({ list: 'reminders' }, this.key, { algorithm: 'HS256', subject: userId, audience: AUDIENCE, noTimestamp: true });
    return `${this.config.baseUrl}/mail/unsubscribe?token=${encodeURIComponent(token)}`;
  }

  /** The user a link's token names, or null when it is not one of ours. */
  userOf(token: string): string | null {
    try {
      const claims = jwt.verify(token, this.key, { algorithms: ['HS256'], audience: AUDIENCE }) as jwt.JwtPayload;
      return claims.list === 'reminders' && typeof claims.sub === 'string' ? claims.sub : null;
    } catch {
      return null;
    }
  }
}
