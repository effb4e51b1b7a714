import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';
import { Repository } from 'typeorm';
import { Clock } from '../../clock/clock.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { purgeInBatches } from '../../database/batched-purge.js';
import { EntityTable } from '../../database/entity-table.js';
import { PreparedStatements, Statement } from '../../database/prepared-statements.js';
import { SUPPORTED } from '../capabilities.js';
import { OAuthError } from '../oauth.errors.js';
import type { ApplicationEntity } from './application.entity.js';
import { ClientAssertionEntity } from './client-assertion.entity.js';
import { ASSERTION_SIGNING_ALGS, ClientKeys } from './client-keys.js';

/** RFC 7523 §2.2: the only `client_assertion_type` there is. */
export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** An assertion may be valid for at most this long from now (its `jti` is kept that long). */
export const MAX_ASSERTION_LIFETIME_SECONDS = 600;
/** How far the client's clock may be off from Agora's, for `exp`, `nbf` and `iat`. */
const CLOCK_TOLERANCE_SECONDS = 30;
/** Far beyond an assertion signed with a 4096-bit RSA key. */
const MAX_ASSERTION_LENGTH = 8192;
const MAX_JTI_LENGTH = 256;

const invalid = (description: string) => new OAuthError('invalid_client', description);

/**
 * `private_key_jwt` (RFC 7523 §2.2 and §3, OpenID Connect Core §9): the client proves itself with a JWT it
 * signed with its private key, checked as a list of small steps: the assertion's type and shape, the
 * client it names, the signature (one of ASSERTION_SIGNING_ALGS, a key of the client's set), the claims
 * (iss and sub the client id; aud this server's issuer, its token endpoint, or the endpoint called; exp in
 * the future and at most MAX_ASSERTION_LIFETIME_SECONDS away; a jti), and last the jti, which no other
 * assertion of this client may have had before it expires, on any instance (oauth_client_assertions).
 * Every failure is `invalid_client`.
 */
@Injectable()
export class ClientAssertionVerifier {
  private readonly table: EntityTable<ClientAssertionEntity>;
  private readonly remember: Statement;

  constructor(
    @InjectRepository(ClientAssertionEntity) private readonly assertions: Repository<ClientAssertionEntity>,
    private readonly keys: ClientKeys,
    private readonly statements: PreparedStatements,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.table = new EntityTable<ClientAssertionEntity>(assertions.metadata, 'j');
    this.remember = {
      name: 'oauth_client_assertion_remember',
      text: `INSERT INTO ${this.table.name} (${this.table.list('applicationId', 'jti', 'expiresAt')}) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING RETURNING 1 AS inserted`,
    };
  }

  /** The client id an assertion names (its `sub`), unverified: which client's keys to verify it with. */
  clientIdOf(params: { client_assertion_type?: string; client_assertion?: string; client_id?: string }): string {
    if (params.client_assertion_type !== JWT_BEARER_ASSERTION) throw invalid(`client_assertion_type must be ${JWT_BEARER_ASSERTION}`);
    const assertion = params.client_assertion;
    if (!assertion) throw invalid('client_assertion is required with client_assertion_type');
    if (assertion.length > MAX_ASSERTION_LENGTH) throw invalid(`client_assertion must be at most ${MAX_ASSERTION_LENGTH} characters`);
    let claims: JWTPayload;
    try {
      claims = decodeJwt(assertion);
    } catch {
      throw invalid('client_assertion is not a JWT');
    }
    if (typeof claims.sub !== 'string' || claims.sub.length === 0) throw invalid('The client assertion must have sub, the client id');
    if (params.client_id !== undefined && params.client_id !== claims.sub)
      throw invalid('client_id differs from the sub of the client assertion');
    return claims.sub;
  }

  /** Verifies `assertion` as `application`'s, sent to `endpointUrl`, and spends its jti. */
  async verify(application: ApplicationEntity, assertion: string, endpointUrl: string): Promise<void> {
    const issuer = this.config.baseUrl;
    const now = this.clock.now();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(assertion, this.keys.keysOf(application), {
        algorithms: [...ASSERTION_SIGNING_ALGS],
        issuer: application.clientId,
        subject: application.clientId,
        audience: [...new Set([issuer, `${issuer}${SUPPORTED.endpoints.token_endpoint}`, endpointUrl])],
        requiredClaims: ['exp', 'jti'],
        currentDate: now,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
      }));
    } catch (err) {
      throw assertionError(err, issuer);
    }
    const exp = payload.exp!;
    if (exp - now.getTime() / 1000 > MAX_ASSERTION_LIFETIME_SECONDS + CLOCK_TOLERANCE_SECONDS)
      throw invalid(`The client assertion must expire within ${MAX_ASSERTION_LIFETIME_SECONDS} seconds`);
    const jti = payload.jti!;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH)
      throw invalid(`The client assertion's jti must be a string of 1 to ${MAX_JTI_LENGTH} characters`);
    const [spent] = await this.statements.query(this.remember, [application.id, jti, new Date(exp * 1000)]);
    if (!spent) throw invalid('This client assertion was used before: sign a new one, with a new jti, for each request');
  }

  /** Deletes the jtis of assertions expired (they can no longer be replayed); answers how many. */
  async purgeExpired(): Promise<number> {
    return purgeInBatches((text, values) => this.assertions.query(text, values), this.table.name, 't.expires_at <= $1', [
      new Date(this.clock.now().getTime() - CLOCK_TOLERANCE_SECONDS * 1000),
    ]);
  }
}

/** What jose found wrong, in words for the client's developer. */
function assertionError(err: unknown, issuer: string): OAuthError {
  if (err instanceof OAuthError) return err;
  if (err instanceof errors.JWTExpired) return invalid('The client assertion has expired');
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return invalid(`The client assertion's aud must be the issuer (${issuer}) or the token endpoint URL`);
    if (err.claim === 'iss' || err.claim === 'sub') return invalid(`The client assertion's ${err.claim} must be the client id`);
    if (err.claim === 'nbf') return invalid('The client assertion is not valid yet (nbf)');
    if (err.claim === 'iat') return invalid('The client assertion was issued in the future (iat)');
    return invalid(`The client assertion's ${err.claim} is missing or wrong: ${err.message}`);
  }
  if (err instanceof errors.JOSEAlgNotAllowed)
    return invalid(`The client assertion must be signed with one of ${ASSERTION_SIGNING_ALGS.join(', ')}`);
  if (err instanceof errors.JWKSNoMatchingKey) return invalid("No key of the client's key set matches the client assertion (kid, alg)");
  if (err instanceof errors.JWKSMultipleMatchingKeys)
    return invalid("Several keys of the client's key set match the client assertion: give it a kid");
  if (err instanceof errors.JWSSignatureVerificationFailed)
    return invalid("The client assertion's signature does not verify with the client's keys");
  if (err instanceof errors.JOSEError) return invalid(`The client assertion is not valid: ${err.message}`);
  throw err;
}
