import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { csrfToken, verifyCsrf } from '../web/csrf.js';
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

  async signIn(reply: FastifyReply, userId: string): Promise<void> {
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
}
