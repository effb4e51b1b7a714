import { Inject, Injectable } from '@nestjs/common';
import { acrOf, type AuthMethod } from '../../auth/authentication-methods.js';
import { Clock } from '../../clock/clock.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { isUuid } from '../../database/uuid.js';
import { audiences, OwnJwts } from '../keys/own-jwts.js';
import { DEFAULT_SIGNING_ALG, SigningAlg } from '../keys/signing-algorithms.js';
import { SigningKeysService } from '../keys/signing-keys.service.js';
import { SigningThread } from '../keys/signing-thread.js';

/** The JWS `typ` of a JWT access token (RFC 9068 §2.1); no id_token or ticket code carries it. */
export const JWT_ACCESS_TOKEN_TYPE = 'at+jwt';

/** Every JWT starts with the base64url of `{"`: how `Authorization: Bearer` tells one from an `agora_` token. */
export const JWT_PREFIX = 'eyJ';

/** What a JWT access token says: the stored token (its row's id is the `jti`) and whom it is for. */
export interface JwtAccessTokenClaims {
  /** The access token's row id: the `jti`, by which revocation and introspection find it. */
  id: string;
  /** The person's id; for a service account's token (no person), its client id (RFC 9068 §2.2). */
  subject: string;
  clientId: string;
  scopes: readonly string[];
  expiresIn: number;
  authTime: Date;
  amr: readonly AuthMethod[];
  /** The client's `id_token_signed_response_alg`. */
  alg?: SigningAlg;
  /** `aud`: Agora's API (BASE_URL) unless the token is for registered resource servers (RFC 8707). */
  audience?: string | string[];
}

/**
 * JWT access tokens (RFC 9068), for applications whose access token format is `jwt`: the same row as an
 * opaque token (its `jti` is the row's id, so revocation, introspection and expiry work as for any
 * token), signed on the signing thread with the client's algorithm, for the audience of Agora's API
 * (BASE_URL, the `resource` of its RFC 9728 metadata). A resource server elsewhere verifies one against
 * the JWKS; Agora verifies the signature and then reads the row, so it refuses a revoked one at once.
 */
@Injectable()
export class JwtAccessTokens {
  constructor(
    private readonly keys: SigningKeysService,
    private readonly signer: SigningThread,
    private readonly ownJwts: OwnJwts,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The audience of an access token for Agora's API (RFC 8707, src/oauth/resource-indicator.ts). */
  get audience(): string {
    return this.config.baseUrl;
  }

  async sign(token: JwtAccessTokenClaims): Promise<string> {
    const { kid, alg, privateKey } = await this.keys.activeKey(token.alg ?? DEFAULT_SIGNING_ALG);
    const iat = Math.floor(this.clock.now().getTime() / 1000);
    const claims = {
      iss: this.config.baseUrl,
      exp: iat + token.expiresIn,
      aud: token.audience ?? this.audience,
      sub: token.subject,
      client_id: token.clientId,
      iat,
      jti: token.id,
      scope: token.scopes.join(' '),
      auth_time: Math.floor(token.authTime.getTime() / 1000),
      ...(token.amr.length > 0 && { amr: [...token.amr], acr: acrOf(token.amr) }),
    };
    return this.signer.sign(claims, privateKey, { kid, alg, typ: JWT_ACCESS_TOKEN_TYPE });
  }

  /**
   * The `jti` (the row's id) and `client_id` of a JWT access token this server signed, unexpired by the
   * Clock, and its `aud`, whatever it is; null for anything else (a forged, tampered, expired or foreign
   * JWT, an id_token, a ticket code, or no JWT at all). Whether it was revoked, and whom it is for, is the
   * row's to say (AccessTokensService: the `aud` must be the row's audience, and Agora's API takes only
   * tokens whose audience includes it).
   */
  async read(token: string): Promise<{ id: string; clientId: string; audience: string[] } | null> {
    if (!token.startsWith(JWT_PREFIX)) return null;
    const verified = await this.ownJwts.verify(token, { typ: JWT_ACCESS_TOKEN_TYPE, checkExpiry: true });
    const jti = verified?.claims.jti;
    const clientId = verified?.claims.client_id;
    if (typeof jti !== 'string' || !isUuid(jti) || typeof clientId !== 'string') return null;
    return { id: jti, clientId, audience: audiences(verified!.claims) };
  }
}
