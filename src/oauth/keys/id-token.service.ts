import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../../clock/clock.js';
import { acrOf, AuthMethod } from '../../auth/authentication-methods.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { audiences, OwnJwts } from './own-jwts.js';
import { DEFAULT_SIGNING_ALG, SigningAlg } from './signing-algorithms.js';
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
  /** The client's `id_token_signed_response_alg` (RS256 when it chose none). */
  alg?: SigningAlg;
  /** The browser session's `sid` (back-channel logout), when the grant came from one. */
  sid?: string;
  /** The `sub` the client sees (Subjects: pairwise clients see their own); the user's id when absent. */
  sub?: string;
}

/** What an id_token_hint tells once verified: whom it was issued for, and to which clients. */
export interface IdTokenHint {
  sub: string;
  aud: string[];
}

/**
 * OpenID Connect id_tokens (Core §2): signed with the client's `id_token_signed_response_alg` (RS256,
 * ES256 or EdDSA), `kid` in the header, `auth_time`, `amr` and `acr` of the
 * sign-in the grant came from (docs/account-security.md, "For client developers: acr and amr"), and the
 * claims the scopes allow.
 */
@Injectable()
export class IdTokenService {
  constructor(
    private readonly keys: SigningKeysService,
    private readonly signer: SigningThread,
    private readonly ownJwts: OwnJwts,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async sign(subject: IdTokenSubject): Promise<string> {
    const { kid, alg, privateKey } = await this.keys.activeKey(subject.alg ?? DEFAULT_SIGNING_ALG);
    const iat = Math.floor(this.clock.now().getTime() / 1000);
    const claims: Record<string, unknown> = {
      iss: this.config.baseUrl,
      sub: subject.sub ?? subject.user.id,
      aud: subject.clientId,
      iat,
      exp: iat + this.config.oauth.accessTokenTtlMs / 1000,
      auth_time: Math.floor(subject.authTime.getTime() / 1000),
      amr: [...subject.amr],
      acr: acrOf(subject.amr),
      ...(subject.nonce ? { nonce: subject.nonce } : {}),
      ...(subject.sid ? { sid: subject.sid } : {}),
      ...userClaims(subject.user, subject.scopes),
    };
    return this.signer.sign(claims, privateKey, { kid, alg });
  }

  /** A logout token (Back-Channel Logout 1.0 §2.4): the claims given, signed as the client's id_tokens are (`alg`), `typ: logout+jwt`. */
  async signLogoutToken(claims: Record<string, unknown>, alg_?: SigningAlg): Promise<string> {
    const { kid, alg, privateKey } = await this.keys.activeKey(alg_);
    return this.signer.sign(claims, privateKey, { kid, alg, typ: 'logout+jwt' });
  }

  /**
   * An id_token this server issued, read back as a hint (RP-Initiated Logout §2): signed by one of our
   * keys with that key's algorithm (RS256, ES256 or EdDSA), no `typ` (so neither a JWT access token nor a
   * ticket code passes), our `iss`, a `sub` and an `aud`. Its expiry is not checked, as the specification
   * allows: a relying party logs out with the id_token it kept, usually long after it expired. Null
   * otherwise.
   */
  async readHint(token: string): Promise<IdTokenHint | null> {
    const verified = await this.ownJwts.verify(token, { checkExpiry: false });
    if (!verified) return null;
    const { sub } = verified.claims;
    if (typeof sub !== 'string' || !sub) return null;
    const aud = audiences(verified.claims);
    return aud.length > 0 ? { sub, aud } : null;
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
