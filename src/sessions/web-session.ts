import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { WebCookies } from '../web/cookies.js';
import type { CookieChange } from '../web/page-result.js';
import { WEB_COOKIES } from '../web/web.tokens.js';
import { SessionsService } from './sessions.service.js';
import type { AuthMethod } from '../auth/authentication-methods.js';
import { KnownBrowsers } from './known-browsers.js';

/** Signing a browser in and out: the session row and the cookie that carries it. */
@Injectable()
export class WebSession {
  constructor(
    private readonly sessions: SessionsService,
    private readonly browsers: KnownBrowsers,
    @Inject(WEB_COOKIES) private readonly cookies: WebCookies,
  ) {}

  /**
   * A new session for the user, signed in with these methods (`combineAmr` of every step); the browser's
   * previous one, if any, ends (a sign-in never reuses a session). Every completed sign-in (password,
   * second step, passkey, sign-up) comes through here, so this is where a browser the account was not
   * used in before is noticed and the user told (KnownBrowsers).
   */
  async signIn(req: FastifyRequest, userId: string, amr: AuthMethod[]): Promise<CookieChange[]> {
    const previous = req.cookies[this.cookies.session];
    if (previous) await this.sessions.destroy(previous);
    const device = await this.browsers.noteSignIn(req, userId);
    const { cookieValue, expiresAt } = await this.sessions.create(userId, amr, req.headers['user-agent']);
    return [{ name: this.cookies.session, value: cookieValue, options: this.cookies.options('lax', { expires: expiresAt }) }, ...device];
  }

  async signOut(req: FastifyRequest): Promise<CookieChange[]> {
    await this.sessions.destroy(req.cookies[this.cookies.session]);
    return [{ name: this.cookies.session, value: null, options: this.cookies.options('lax') }];
  }
}
