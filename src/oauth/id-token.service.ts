import { Inject, Injectable } from '@nestjs/common';
import jwt from 'jsonwebtoken';
import { Clock } from '../clock/clock.js';
import { acrOf, AuthMethod } from '../sessions/authentication-methods.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { SigningKeysService } from './signing-keys.service.js';
import { SigningThread } from './signing-thread.js';

/** The user as the claims show them: what `userClaims` reads. */
export interface ClaimsUser {
  id: string;
  username: string;
  name: string;
  email: string;
  emailVerified: boolean;
}

export interface IdTokenSubject {
  user: ClaimsUser;
  clientId: string;
  scopes: string[];
  /** When the user last proved who they are in the session the grant came from (a step-up moves it). */
  authTime: Date;
  /** How (RFC 8176): the id_token's `amr`, and its `acr` (`acrOf`). */
  amr: readonly AuthMethod[];
  nonce: string | null;
}

/** What an id_token_hint tells once verified: whom it was issued for, and to which clients. */
export interface IdTokenHint {
  sub: string;
  aud: string[];
}

/**
 * OpenID Connect id_tokens (Core §2): RS256, `kid` in the header, `auth_time`, `amr` and `acr` of the
 * sign-in the grant came from (docs/account-security.md, "For client developers: acr and amr"), and the
 * claims the scopes allow.
 */
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
      amr: [...subject.amr],
      acr: acrOf(subject.amr),
      ...(subject.nonce ? { nonce: subject.nonce } : {}),
      ...userClaims(subject.user, subject.scopes),
    };
    return this.signer.sign(claims, privateKey, kid);
  }

  /**
   * An id_token this server issued, read back as a hint (RP-Initiated Logout §2): RS256 signed by one of
   * our keys, our `iss`, a `sub` and an `aud`. Its expiry is not checked, as the specification allows: a
   * relying party logs out with the id_token it kept, usually long after it expired. Null otherwise.
   */
  async readHint(token: string): Promise<IdTokenHint | null> {
    const header = jwtHeader(token);
    const kid = header?.kid;
    if (!header || header.alg !== 'RS256' || typeof kid !== 'string') return null;
    const key = await this.keys.verificationKey(kid);
    if (!key) return null;
    let claims: jwt.JwtPayload | string;
    try {
      claims = jwt.verify(token, key, {
        algorithms: ['RS256'],
        issuer: this.config.baseUrl,
        ignoreExpiration: true,
        ignoreNotBefore: true,
      });
    } catch {
      return null;
    }
    if (typeof claims === 'string' || typeof claims.sub !== 'string' || !claims.sub) return null;
    const aud = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : [];
    if (aud.length === 0 || !aud.every((a) => typeof a === 'string')) return null;
    return { sub: claims.sub, aud };
  }
}

/** A JWT's header, or null; jsonwebtoken's decode throws, rather than answering null, for some malformed tokens. */
function jwtHeader(token: string): jwt.JwtHeader | null {
  try {
    return jwt.decode(token, { complete: true })?.header ?? null;
  } catch {
    return null;
  }
}

/** Claims the scopes allow (OIDC Core §5.4), shared by id_tokens and userinfo. */
export function userClaims(user: ClaimsUser, scopes: Iterable<string>): Record<string, unknown> {
  const granted = new Set(scopes);
  return {
    ...(granted.has('profile') ? { name: user.name, preferred_username: user.username } : {}),
    ...(granted.has('email') ? { email: user.email, email_verified: user.emailVerified } : {}),
  };
}
