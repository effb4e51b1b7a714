import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { CsrfError, csrfToken, verifyCsrf } from '../web/csrf.js';
import { sendPage } from '../web/security-headers.js';
import { messagePage } from './sign-in.pages.js';
import { SessionsService, SignedInUser } from './sessions.service.js';

export const SESSION_COOKIE = 'agora_session';

/** What web controllers need of the browser session: who is signed in, cookies and CSRF. */
@Injectable()
export class WebSession {
  constructor(
    private readonly sessions: SessionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  current(req: FastifyRequest): Promise<SignedInUser | null> {
    return this.sessions.resolve(req.cookies[SESSION_COOKIE]);
  }

  /** A new session for the user; the browser's previous one, if any, ends (a sign-in never reuses a session). */
  async signIn(req: FastifyRequest, reply: FastifyReply, userId: string): Promise<void> {
    const previous = req.cookies[SESSION_COOKIE];
    if (previous) await this.sessions.destroy(previous);
    const { cookieValue, expiresAt } = await this.sessions.create(userId);
    void reply.setCookie(SESSION_COOKIE, cookieValue, {
      httpOnly: true,
      sameSite: 'lax',
      secure: this.config.secureCookies,
      path: '/',
      expires: expiresAt,
    });
  }

  async signOut(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    await this.sessions.destroy(req.cookies[SESSION_COOKIE]);
    void reply.clearCookie(SESSION_COOKIE, { path: '/' });
  }

  csrfToken(req: FastifyRequest, reply: FastifyReply): string {
    return csrfToken(req, reply, this.config.secureCookies);
  }

  verifyCsrf(req: FastifyRequest): void {
    verifyCsrf(req, this.config.baseUrl);
  }

  /** The signed-in user, or null after redirecting the browser to sign in and come back here. */
  async requireUser(req: FastifyRequest, reply: FastifyReply): Promise<SignedInUser | null> {
    const signedIn = await this.current(req);
    if (!signedIn) void reply.redirect(`/sign-in?return_to=${encodeURIComponent(req.url)}`, 303);
    return signedIn;
  }

  /** True when the posted form passes the CSRF check; otherwise answers 403 with a page and returns false. */
  acceptForm(req: FastifyRequest, reply: FastifyReply): boolean {
    try {
      this.verifyCsrf(req);
      return true;
    } catch (err) {
      if (!(err instanceof CsrfError)) throw err;
      sendPage(
        reply,
        messagePage('Form expired', 'This form was not sent from this site or has expired. Go back, reload the page and try again.'),
        {
          status: 403,
        },
      );
      return false;
    }
  }
}
