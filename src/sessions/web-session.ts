import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { WebCookies } from '../web/cookies.js';
import type { CookieChange } from '../web/page-result.js';
import { WEB_COOKIES } from '../web/web.tokens.js';
import { SessionsService } from './sessions.service.js';

/** Signing a browser in and out: the session row and the cookie that carries it. */
@Injectable()
export class WebSession {
  constructor(
    private readonly sessions: SessionsService,
    @Inject(WEB_COOKIES) private readonly cookies: WebCookies,
  ) {}

  /** A new session for the user; the browser's previous one, if any, ends (a sign-in never reuses a session). */
  async signIn(req: FastifyRequest, userId: string): Promise<CookieChange[]> {
    const previous = req.cookies[this.cookies.session];
    if (previous) await this.sessions.destroy(previous);
    const { cookieValue, expiresAt } = await this.sessions.create(userId, req.headers['user-agent']);
    return [{ name: this.cookies.session, value: cookieValue, options: this.cookies.options('lax', { expires: expiresAt }) }];
  }

  async signOut(req: FastifyRequest): Promise<CookieChange[]> {
    await this.sessions.destroy(req.cookies[this.cookies.session]);
    return [{ name: this.cookies.session, value: null, options: this.cookies.options('lax') }];
  }
}
