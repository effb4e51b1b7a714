import { Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import passport from 'passport';
import { AuthError } from './auth.errors.js';
import { Principal } from './principal.js';

/**
 * Picks the authentication strategy from the request headers and runs it through passport:
 * `Authorization` → bearer, `Private-Token` → private-token, both → rejected, neither → anonymous.
 * Only the two headers are handed to passport, so tokens in the query string or body are ignored.
 */
@Injectable()
export class RequestAuthenticator {
  /** The caller's Principal, or null for an anonymous request; throws AuthError for bad credentials. */
  async authenticate(headers: IncomingHttpHeaders): Promise<Principal | null> {
    const authorization = headers.authorization;
    const privateToken = headers['private-token'];
    if (authorization === undefined && privateToken === undefined) return null;
    if (authorization !== undefined && privateToken !== undefined) throw AuthError.invalidCredentials();
    const strategy = authorization !== undefined ? 'bearer' : 'private-token';
    const principal = await runStrategy(strategy, { authorization, 'private-token': privateToken });
    if (!principal) throw AuthError.invalidCredentials();
    return principal;
  }
}

function runStrategy(name: string, headers: IncomingHttpHeaders): Promise<Principal | null> {
  return new Promise((resolve, reject) => {
    const request = { headers, query: {}, body: {} };
    const middleware = passport.authenticate(name, { session: false }, (err: unknown, principal: Principal | false) => {
      if (err) reject(err);
      else resolve(principal || null);
    });
    middleware(request, {}, reject);
  });
}
