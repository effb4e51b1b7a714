import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import passport from 'passport';
import { decodedHeader } from '../errors/header-text.js';
import { UnstorableTextError } from '../errors/text-input.js';
import { AuthError } from './auth.errors.js';
import { CredentialVerifier } from './credential-verifier.js';
import { Principal } from './principal.js';
import { SecretPrefix } from './secret-token.js';

/**
 * Authenticates an API request by the browser's sign-in session. The dashboard module's SessionCredential registers it
 * (it owns sessions and the CSRF tokens), so the auth module depends on neither.
 */
export interface SessionCredentialVerifier {
  /** The request header whose presence selects this strategy (the page's CSRF token). */
  readonly header: string;
  /** The session's Principal, or null unless the session cookie and the token in `header` both check out. */
  verify(request: FastifyRequest): Promise<Principal | null>;
}

export interface AuthenticateOptions {
  /** Whether the route accepts the session credential (`@AcceptsSessionCredential()`). */
  session?: boolean;
}

/**
 * Picks the authentication strategy from the request headers: `Authorization` → bearer,
 * `Private-Token` → private-token (both run through passport), both → rejected; neither → the
 * session strategy if the route accepts it and the request carries the CSRF header, else anonymous.
 * Only those headers are handed to the token strategies, so tokens in the query string or body are
 * ignored; a session cookie alone never authenticates an API request.
 *
 * A token the strategies verified moments ago (still in the credential cache, which every change to it
 * evicts) is answered from memory without running them again, and without a promise, so the guard can
 * let the request through in the same tick.
 */
@Injectable()
export class RequestAuthenticator {
  private sessions?: SessionCredentialVerifier;

  constructor(private readonly verifier: CredentialVerifier) {}

  /** Called once at start-up by the dashboard module (SessionCredential). */
  acceptSessions(verifier: SessionCredentialVerifier): void {
    this.sessions = verifier;
  }

  /**
   * The caller's Principal, or null for an anonymous request; throws AuthError for bad credentials
   * (or rejects with it, when the answer needs a strategy).
   */
  authenticate(request: FastifyRequest, options: AuthenticateOptions = {}): Principal | null | Promise<Principal | null> {
    const { headers } = request;
    const authorization = credentialHeader(headers.authorization, 'Authorization');
    const privateToken = credentialHeader(headers['private-token'], 'Private-Token');
    if (authorization === undefined && privateToken === undefined) {
      if (!options.session || !this.sessions || headers[this.sessions.header] === undefined) return null;
      return this.sessions.verify(request).then(required);
    }
    if (authorization !== undefined && privateToken !== undefined) throw AuthError.invalidCredentials();
    const remembered =
      authorization !== undefined
        ? this.verifier.remembered(bearerToken(authorization) ?? '')
        : this.verifier.remembered(privateToken!, SecretPrefix.personalAccessToken);
    if (remembered) return remembered;
    const strategy = authorization !== undefined ? 'bearer' : 'private-token';
    return runStrategy(strategy, { authorization, 'private-token': privateToken }).then(required);
  }
}

/**
 * Far longer than any token Agora issues (a prefix and 43 characters, or a JWT access token of about a
 * thousand), and than the `Bearer ` before one: refused without hashing it.
 */
const MAX_CREDENTIAL_HEADER_LENGTH = 4096;

/** A credential header through the header text boundary: text that fails it is a rejected credential (401). */
function credentialHeader(value: string | string[] | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw AuthError.invalidCredentials();
  try {
    return decodedHeader(value, name, MAX_CREDENTIAL_HEADER_LENGTH);
  } catch (err) {
    if (err instanceof UnstorableTextError) throw AuthError.invalidCredentials();
    throw err;
  }
}

function required(principal: Principal | null): Principal {
  if (!principal) throw AuthError.invalidCredentials();
  return principal;
}

/** The token of `Authorization: Bearer <token>`, read as passport-http-bearer reads it (any case of the scheme). */
function bearerToken(authorization: string): string | undefined {
  const space = authorization.indexOf(' ');
  if (space === -1 || authorization.slice(0, space).toLowerCase() !== 'bearer') return undefined;
  const token = authorization.slice(space + 1);
  return token.length > 0 && !token.includes(' ') ? token : undefined;
}

const STRATEGY_OPTIONS = { session: false };
const NO_PARAMETERS = Object.freeze({});

function runStrategy(name: string, headers: IncomingHttpHeaders): Promise<Principal | null> {
  return new Promise((resolve, reject) => {
    const request = { headers, query: NO_PARAMETERS, body: NO_PARAMETERS };
    const middleware = passport.authenticate(name, STRATEGY_OPTIONS, (err: unknown, principal: Principal | false) => {
      if (err) reject(err);
      else resolve(principal || null);
    });
    middleware(request, {}, reject);
  });
}
