import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import passport from 'passport';
import { AuthError } from './auth.errors.js';
import { Principal } from './principal.js';

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
 */
@Injectable()
export class RequestAuthenticator {
  private sessions?: SessionCredentialVerifier;

  /** Called once at start-up by the dashboard module (SessionCredential). */
  acceptSessions(verifier: SessionCredentialVerifier): void {
    this.sessions = verifier;
  }

  /** The caller's Principal, or null for an anonymous request; throws AuthError for bad credentials. */
  async authenticate(request: FastifyRequest, options: AuthenticateOptions = {}): Promise<Principal | null> {
    const { headers } = request;
    const authorization = headers.authorization;
    const privateToken = headers['private-token'];
    if (authorization === undefined && privateToken === undefined) {
      if (!options.session || !this.sessions || headers[this.sessions.header] === undefined) return null;
      const principal = await this.sessions.verify(request);
      if (!principal) throw AuthError.invalidCredentials();
      return principal;
    }
    if (authorization !== undefined && privateToken !== undefined) throw AuthError.invalidCredentials();
    const strategy = authorization !== undefined ? 'bearer' : 'private-token';
    const principal = await runStrategy(strategy, { authorization, 'private-token': privateToken });
    if (!principal) throw AuthError.invalidCredentials();
    return principal;
  }
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
