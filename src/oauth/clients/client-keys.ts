import { Inject, Injectable } from '@nestjs/common';
import { createLocalJWKSet, errors, importJWK, type JWK, type JWTVerifyGetKey } from 'jose';
import { Clock } from '../../clock/clock.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { getDocument, urlProblem } from '../../outbound/outbound.js';
import { OAuthError } from '../oauth.errors.js';
import { SUPPORTED } from '../capabilities.js';
import type { ApplicationEntity, ClientAuthMethod, ClientType, PublicKeySet } from './application.entity.js';
import { ApplicationError } from './applications.errors.js';

/** The signature algorithms a client assertion may use: asymmetric only, never `none` or HS*. */
export const ASSERTION_SIGNING_ALGS: readonly string[] = SUPPORTED.clientAssertionSigningAlgs;

/** The most keys a client's set may hold, and the largest set (bytes of JSON), by value or fetched. */
export const MAX_KEYS = 10;
export const MAX_JWKS_BYTES = 64 * 1024;
/** The whole fetch of a `jwks_uri`, resolution included: a token request waits for it. */
const FETCH_TIMEOUT_MS = 5000;
const MAX_JWKS_URI_LENGTH = 2048;

/** Why a key set cannot be a client's, in words for its developer; null when it can. */
export async function keySetProblem(value: unknown): Promise<string | null> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be a JSON Web Key Set: an object with "keys"';
  const keys = (value as { keys?: unknown }).keys;
  if (!Array.isArray(keys) || keys.length === 0) return 'must have a non-empty "keys" array';
  if (keys.length > MAX_KEYS) return `must have at most ${MAX_KEYS} keys`;
  if (JSON.stringify(value).length > MAX_JWKS_BYTES) return `must be at most ${MAX_JWKS_BYTES} bytes of JSON`;
  for (const [i, key] of keys.entries()) {
    const problem = await keyProblem(key);
    if (problem) return `keys[${i}] ${problem}`;
  }
  return null;
}

async function keyProblem(key: unknown): Promise<string | null> {
  if (typeof key !== 'object' || key === null || Array.isArray(key)) return 'must be a JSON Web Key object';
  const jwk = key as JWK;
  if (!['RSA', 'EC', 'OKP'].includes(jwk.kty ?? '')) return 'must be an RSA, EC or OKP public key (kty)';
  if (['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'].some((member) => member in jwk)) return 'is a private key: publish only the public key';
  if (jwk.use !== undefined && jwk.use !== 'sig') return 'must have use "sig" (or none)';
  if (jwk.alg !== undefined && !(ASSERTION_SIGNING_ALGS as readonly string[]).includes(jwk.alg))
    return `has alg ${String(jwk.alg)}; supported: ${ASSERTION_SIGNING_ALGS.join(', ')}`;
  try {
    await importJWK(jwk, jwk.alg ?? defaultAlg(jwk));
  } catch (err) {
    return `is not a usable public key (${(err as Error).message})`;
  }
  return null;
}

function defaultAlg(jwk: JWK): string {
  if (jwk.kty === 'RSA') return 'RS256';
  if (jwk.kty === 'EC') return 'ES256';
  return 'EdDSA';
}

/** Why a `jwks_uri` cannot be registered (no resolution: that happens at each fetch); null when it can. */
export function jwksUriProblem(value: string, policy: AppConfig['oauth']['clientJwks']['policy']): string | null {
  if (value.length > MAX_JWKS_URI_LENGTH) return `must be at most ${MAX_JWKS_URI_LENGTH} characters`;
  return urlProblem(value, policy);
}

interface CachedSet {
  uri: string;
  fetchedAt: number;
  resolve: JWTVerifyGetKey;
}

/**
 * The public keys a `private_key_jwt` client's assertions are verified with: the set it registered by
 * value, or the one published at its `jwks_uri`. A fetched set is kept OAUTH_JWKS_URI_CACHE_SECONDS on
 * this instance; an assertion whose key the kept set lacks (a key rotated in at the client) fetches it
 * again, at most once per OAUTH_JWKS_URI_REFETCH_SECONDS per client, so that forged `kid`s cannot make
 * Agora hammer the client's server. The fetch follows the webhooks' rules (src/outbound/): the address
 * checked and pinned, 5 s, 64 KiB, no redirects.
 */
@Injectable()
export class ClientKeys {
  private readonly fetched = new Map<string, CachedSet>();
  private readonly inFlight = new Map<string, Promise<CachedSet>>();
  /** A fetch that failed, answered again without asking until the refetch interval has passed. */
  private readonly failed = new Map<string, { at: number; error: OAuthError }>();

  constructor(
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** What jose's jwtVerify takes to find the key of an assertion of this client. */
  keysOf(application: ApplicationEntity): JWTVerifyGetKey {
    if (application.jwks) return createLocalJWKSet(application.jwks as Parameters<typeof createLocalJWKSet>[0]);
    const uri = application.jwksUri;
    if (!uri) throw new OAuthError('invalid_client', 'This client has no public keys registered');
    return async (header, token) => {
      let set = await this.current(application.id, uri);
      try {
        return await set.resolve(header, token);
      } catch (err) {
        if (!(err instanceof errors.JWKSNoMatchingKey) || this.now() - set.fetchedAt < this.config.oauth.clientJwks.refetchIntervalMs)
          throw err;
        set = await this.fetch(application.id, uri);
        return set.resolve(header, token);
      }
    };
  }

  /** Forgets a client's fetched keys (its jwks_uri changed, or it was deleted). */
  forget(applicationId: string): void {
    this.fetched.delete(applicationId);
    for (const key of this.failed.keys()) if (key.startsWith(`${applicationId} `)) this.failed.delete(key);
  }

  private now(): number {
    return this.clock.now().getTime();
  }

  private async current(applicationId: string, uri: string): Promise<CachedSet> {
    const cached = this.fetched.get(applicationId);
    if (cached && cached.uri === uri && this.now() - cached.fetchedAt < this.config.oauth.clientJwks.cacheMs) return cached;
    return this.fetch(applicationId, uri);
  }

  /** One fetch at a time per client: concurrent assertions wait for the same one. */
  private fetch(applicationId: string, uri: string): Promise<CachedSet> {
    const key = `${applicationId} ${uri}`;
    const running = this.inFlight.get(key);
    if (running) return running;
    const failure = this.failed.get(key);
    if (failure && this.now() - failure.at < this.config.oauth.clientJwks.refetchIntervalMs) return Promise.reject(failure.error);
    const fetching = this.load(uri).then(
      (set) => {
        this.inFlight.delete(key);
        this.failed.delete(key);
        this.fetched.set(applicationId, set);
        return set;
      },
      (err: unknown) => {
        this.inFlight.delete(key);
        if (err instanceof OAuthError) this.failed.set(key, { at: this.now(), error: err });
        throw err;
      },
    );
    this.inFlight.set(key, fetching);
    return fetching;
  }

  private async load(uri: string): Promise<CachedSet> {
    const fetchedAt = this.now();
    const document = await getDocument(uri, this.config.oauth.clientJwks.policy, MAX_JWKS_BYTES, {
      timeoutMs: FETCH_TIMEOUT_MS,
      accept: 'application/jwk-set+json, application/json',
    });
    if ('problem' in document) throw new OAuthError('invalid_client', `The client's jwks_uri could not be read: ${document.problem}`);
    let set: unknown;
    try {
      set = JSON.parse(document.body.toString('utf8'));
    } catch {
      throw new OAuthError('invalid_client', "The client's jwks_uri does not answer JSON");
    }
    const problem = await keySetProblem(set);
    if (problem) throw new OAuthError('invalid_client', `The key set at the client's jwks_uri ${problem}`);
    return { uri, fetchedAt, resolve: createLocalJWKSet(set as PublicKeySet as Parameters<typeof createLocalJWKSet>[0]) };
  }
}

/** How a client authenticates, as given (dashboard form, registration metadata), before it is checked. */
export interface ClientAuthenticationInput {
  /** Default: `none` for a public client, `client_secret_basic` for a confidential one. */
  tokenEndpointAuthMethod?: string;
  /** `private_key_jwt`: the public keys by value (a JWK Set)… */
  jwks?: unknown;
  /** …or by address: one of the two. */
  jwksUri?: string;
}

export interface ValidClientAuthentication {
  tokenEndpointAuthMethod: ClientAuthMethod;
  jwks: PublicKeySet | null;
  jwksUri: string | null;
}

const SECRET_METHODS: readonly string[] = ['client_secret_basic', 'client_secret_post'];

/**
 * Checks a client's authentication method against its type, and a `private_key_jwt` client's keys:
 * exactly one of `jwks` (public asymmetric keys, at most MAX_KEYS) and `jwks_uri` (an address the
 * webhooks' rules allow); other clients give neither.
 */
export async function validateClientAuthentication(
  input: ClientAuthenticationInput,
  clientType: ClientType,
  policy: AppConfig['oauth']['clientJwks']['policy'],
): Promise<ValidClientAuthentication> {
  const method = input.tokenEndpointAuthMethod ?? (clientType === 'public' ? 'none' : 'client_secret_basic');
  const none = { jwks: null, jwksUri: null };
  const keysGiven = input.jwks !== undefined || input.jwksUri !== undefined;
  if (clientType === 'public') {
    if (method !== 'none')
      throw new ApplicationError(
        'INVALID_AUTH_METHOD',
        'A public client authenticates with none: it has no secret and no keys',
        'tokenEndpointAuthMethod',
      );
    if (keysGiven) throw new ApplicationError('INVALID_KEYS', 'A public client has no keys', 'jwks');
    return { tokenEndpointAuthMethod: 'none', ...none };
  }
  if (SECRET_METHODS.includes(method)) {
    if (keysGiven) throw new ApplicationError('INVALID_KEYS', 'Public keys are for private_key_jwt clients only', 'jwks');
    return { tokenEndpointAuthMethod: method as ClientAuthMethod, ...none };
  }
  if (method !== 'private_key_jwt') {
    throw new ApplicationError(
      'INVALID_AUTH_METHOD',
      'A confidential client authenticates with client_secret_basic, client_secret_post or private_key_jwt',
      'tokenEndpointAuthMethod',
    );
  }
  if ((input.jwks === undefined) === (input.jwksUri === undefined))
    throw new ApplicationError(
      'INVALID_KEYS',
      'A private_key_jwt client gives its public keys either by value (jwks) or by address (jwks_uri)',
      'jwks',
    );
  if (input.jwksUri !== undefined) {
    const problem = jwksUriProblem(input.jwksUri, policy);
    if (problem) throw new ApplicationError('INVALID_KEYS', `jwks_uri: ${problem}`, 'jwksUri');
    return { tokenEndpointAuthMethod: 'private_key_jwt', jwks: null, jwksUri: input.jwksUri };
  }
  const problem = await keySetProblem(input.jwks);
  if (problem) throw new ApplicationError('INVALID_KEYS', `jwks ${problem}`, 'jwks');
  return { tokenEndpointAuthMethod: 'private_key_jwt', jwks: input.jwks as PublicKeySet, jwksUri: null };
}
