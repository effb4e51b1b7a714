import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import { RequestAuthenticator, SessionCredentialVerifier } from '../auth/request-authenticator.js';
import type { WebCookies } from '../web/cookies.js';
import { CSRF_HEADER, CsrfError, CsrfTokens } from '../web/csrf.js';
import { WEB_COOKIES } from '../web/web.tokens.js';
import { SessionsService } from '../sessions/sessions.service.js';

/** What a session may do on the API: everything its user may (the explorer runs as the user). */
const SESSION_SCOPES: ReadonlySet<string> = new Set(['api']);

/**
 * The sign-in session as an API credential, for the API explorer's same-origin calls. The cookie alone
 * is not enough: the request must also carry, in `X-CSRF-Token`, a token our pages issued for this very
 * session, and come from our origin (CsrfTokens.verify refuses another `Origin`, `Origin: null` and a
 * cross-site `Sec-Fetch-Site`). Another site can make a browser send the cookie but can neither read
 * a token nor set the header without a CORS preflight, which we never grant; so the session does not
 * become a credential other sites can use. Provided by the dashboard (server only, beside the
 * explorer), not by the sessions module, which the CLI loads without the web module.
 */
@Injectable()
export class SessionCredential implements SessionCredentialVerifier, OnModuleInit {
  readonly header = CSRF_HEADER;

  constructor(
    private readonly authenticator: RequestAuthenticator,
    private readonly sessions: SessionsService,
    private readonly csrf: CsrfTokens,
    @Inject(WEB_COOKIES) private readonly cookies: WebCookies,
  ) {}

  onModuleInit(): void {
    this.authenticator.acceptSessions(this);
  }

  async verify(request: FastifyRequest): Promise<Principal | null> {
    // resolve() finds only unexpired sessions of active users: a blocked user's session is refused.
    const signedIn = await this.sessions.resolve(request.cookies[this.cookies.session]);
    if (!signedIn) return null;
    try {
      this.csrf.verify(request, { sessionId: signedIn.sessionId }, request.headers[CSRF_HEADER]);
    } catch (err) {
      if (err instanceof CsrfError) return null;
      throw err;
    }
    return { user: signedIn.user, scopes: SESSION_SCOPES, credential: { kind: 'session', id: signedIn.sessionId, expiresAt: null } };
  }
}
