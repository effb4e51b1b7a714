import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { SigningKeysService } from './signing-keys.service.js';
import { SigningThread } from './signing-thread.js';

export interface IdTokenSubject {
  user: { id: string; username: string; name: string; email: string };
  clientId: string;
  scopes: string[];
  authTime: Date;
  nonce: string | null;
}

/** OpenID Connect id_tokens (Core §2): RS256, `kid` in the header, claims by scope. */
@Injectable()
export class IdTokenService {
  constructor(
    private readonly keys: SigningKeysService,
    private readonly signer: SigningThread,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async sign(subject: IdTokenSubject): Promise<string> {
    const { kid, privateKey } = await this.keys.activeKey();
    const iat = Math.floor(this.clock.now().getTime() / 1000);
    const claims: Record<string, unknown> = {
      iss: this.config.baseUrl,
      sub: subject.user.id,
      aud: subject.clientId,
      iat,
      exp: iat + this.config.oauth.accessTokenTtlMs / 1000,
      auth_time: Math.floor(subject.authTime.getTime() / 1000),
      ...(subject.nonce ? { nonce: subject.nonce } : {}),
      ...userClaims(subject.user, subject.scopes),
    };
    return this.signer.sign(claims, privateKey, kid);
  }
}

/** Claims the scopes allow (OIDC Core §5.4), shared by id_tokens and userinfo. */
export function userClaims(user: IdTokenSubject['user'], scopes: Iterable<string>): Record<string, unknown> {
  const granted = new Set(scopes);
  return {
    ...(granted.has('profile') ? { name: user.name, preferred_username: user.username } : {}),
    ...(granted.has('email') ? { email: user.email, email_verified: false } : {}),
  };
}
