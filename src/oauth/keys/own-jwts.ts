import { Inject, Injectable } from '@nestjs/common';
import { compactVerify, decodeProtectedHeader, jwtVerify, type JWTPayload, type ProtectedHeaderParameters } from 'jose';
import { Clock } from '../../clock/clock.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { SigningKeysService, VerificationKey } from './signing-keys.service.js';

/** A compact JWS is three base64url parts; far longer than any JWT of ours is refused unread. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const MAX_JWT_LENGTH = 4096;

export interface OwnJwtCheck {
  /** The header's `typ` the token must carry (`at+jwt`); when undefined, none or the generic `JWT` (RFC 7519 §5.1). */
  typ?: string;
  /** The `aud` it must be for; not checked when undefined. */
  audience?: string;
  /** Whether `exp` (required then) is checked against the Clock; false for an id_token_hint. */
  checkExpiry: boolean;
}

/**
 * Reads back a JWT this server signed, whichever of its algorithms: the header's `kid` names one of our
 * keys (retired ones included), its `alg` is that key's, the signature holds, `iss` is ours, and `typ`,
 * `aud` and `exp` are what the caller expects. Anything else, malformed input included, is null: never
 * an exception.
 */
@Injectable()
export class OwnJwts {
  constructor(
    private readonly keys: SigningKeysService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async verify(token: string, check: OwnJwtCheck): Promise<{ header: ProtectedHeaderParameters; claims: JWTPayload } | null> {
    if (token.length > MAX_JWT_LENGTH || !COMPACT_JWS.test(token)) return null;
    let header: ProtectedHeaderParameters;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      return null;
    }
    if (typeof header.kid !== 'string' || !typMatches(header.typ, check.typ)) return null;
    const key: VerificationKey | null = await this.keys.publicKey(header.kid);
    if (!key || header.alg !== key.alg) return null;
    try {
      if (check.checkExpiry) {
        const { payload } = await jwtVerify(token, key.key, {
          algorithms: [key.alg],
          issuer: this.config.baseUrl,
          ...(check.typ !== undefined && { typ: check.typ }),
          ...(check.audience !== undefined && { audience: check.audience }),
          requiredClaims: ['exp'],
          currentDate: this.clock.now(),
        });
        return { header, claims: payload };
      }
      const { payload } = await compactVerify(token, key.key, { algorithms: [key.alg] });
      const claims = JSON.parse(new TextDecoder().decode(payload)) as unknown;
      if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return null;
      const parsed = claims as JWTPayload;
      if (parsed.iss !== this.config.baseUrl) return null;
      if (check.audience !== undefined && !audiences(parsed).includes(check.audience)) return null;
      return { header, claims: parsed };
    } catch {
      return null;
    }
  }
}

/** A JWT's `aud` as a list (a string or an array of strings); empty when it has none or it is malformed. */
export function audiences(claims: JWTPayload): string[] {
  const { aud } = claims;
  if (typeof aud === 'string') return [aud];
  return Array.isArray(aud) && aud.every((a) => typeof a === 'string') ? aud : [];
}

/** Whether a header's `typ` is the one expected: exactly, or for a plain JWT (an id_token) absent or `JWT`. */
function typMatches(typ: unknown, expected: string | undefined): boolean {
  if (expected !== undefined) return typ === expected;
  return typ === undefined || (typeof typ === 'string' && typ.toUpperCase() === 'JWT');
}
