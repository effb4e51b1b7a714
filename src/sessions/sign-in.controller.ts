import { Body, Controller, Get, Inject, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OwnAuthentication, Public } from '../auth/public.decorator.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { UsersService } from '../users/users.service.js';
import { html } from '../web/html.js';
import { page } from '../web/layout.js';
import { safeReturnTo } from '../web/return-to.js';
import { sendPage } from '../web/security-headers.js';
import { signInPage } from './sign-in.pages.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { WebSession } from './web-session.js';

const FAILED = 'Incorrect username, email or password.';

/** Browser sign-in and sign-out, shared by the OAuth flow and the dashboard. */
@Controller()
@Public()
@OwnAuthentication()
export class SignInController {
  constructor(
    private readonly session: WebSession,
    private readonly users: UsersService,
    private readonly throttle: SignInThrottle,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('sign-in')
  async form(
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
    @Query('return_to') returnTo?: string,
    @Query('reauth') reauth?: string,
  ): Promise<FastifyReply> {
    const target = safeReturnTo(returnTo, this.config.baseUrl);
    // `reauth`: an application asked for a fresh sign-in (OpenID Connect prompt=login, max_age).
    const signedIn = await this.session.current(req);
    if (signedIn && reauth !== '1') return reply.redirect(target, 303);
    const notice = signedIn ? 'The application you came from asks you to sign in again.' : undefined;
    return sendPage(reply, signInPage({ csrfToken: this.session.csrfToken(req, reply), returnTo: target, notice }));
  }

  @Post('sign-in')
  async signIn(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Body() body: Record<string, unknown>): Promise<FastifyReply> {
    const target = safeReturnTo(body?.return_to, this.config.baseUrl);
    if (!this.session.acceptForm(req, reply)) return reply;
    const login = typeof body.login === 'string' ? body.login : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const wait = await this.throttle.reserveAttempt(login, req.ip);
    if (wait > 0) {
      const minutes = Math.ceil(wait / 60);
      const form = signInPage({
        csrfToken: this.session.csrfToken(req, reply),
        returnTo: target,
        login,
        error: `Too many failed attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      });
      void reply.header('retry-after', String(wait));
      return sendPage(reply, form, { status: 429 });
    }
    const user = login && password ? await this.users.verifyCredentials(login, password) : null;
    if (!user) {
      const form = signInPage({ csrfToken: this.session.csrfToken(req, reply), returnTo: target, login, error: FAILED });
      return sendPage(reply, form, { status: 401 });
    }
    await this.throttle.recordSuccess(login, req.ip);
    await this.session.signIn(req, reply, user.id);
    return reply.redirect(target, 303);
  }

  @Post('sign-out')
  async signOut(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    if (!this.session.acceptForm(req, reply)) return reply;
    await this.session.signOut(req, reply);
    return reply.redirect('/sign-in', 303);
  }

  @Get()
  async home(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    const signedIn = await this.session.current(req);
    if (!signedIn) return reply.redirect('/sign-in', 303);
    const body = html`<div class="card">
      <h1>Welcome, ${signedIn.user.name}</h1>
      <p class="lead">You are signed in as @${signedIn.user.username}.</p>
      <p>The GraphQL API is at <code>${this.config.baseUrl}/graphql</code>.</p>
    </div>`;
    return sendPage(reply, page({ title: 'Home', body, user: signedIn.user, csrfToken: this.session.csrfToken(req, reply) }));
  }
}
