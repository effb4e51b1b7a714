import { Body, Controller, Get, Inject, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { SecondFactors } from '../users/second-factors.js';
import { UsersService } from '../users/users.service.js';
import { html } from '../web/html.js';
import { page } from '../web/layout.js';
import type { PageResult } from '../web/page-result.js';
import { Redirect, seeOther, view } from '../web/page-result.js';
import { AnonymousPage, CurrentSession, Pages, SignedIn } from '../web/pages.decorator.js';
import { safeReturnTo } from '../web/return-to.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { signInPage } from './sign-in.pages.js';
import { AttemptThrottle, tryAgainIn } from './attempt-throttle.js';
import { ReturnOrigins } from './return-origins.js';
import { WebSession } from './web-session.js';
import { SignInSteps } from './sign-in-steps.js';
import { SignInOffers } from './sign-in-offers.js';
import { Metrics } from '../metrics/metrics.js';

const FAILED = 'Incorrect username, email or password.';

/** A username or e-mail address is far shorter; a longer login_hint is not shown. */
const MAX_LOGIN_HINT = 320;

/** Browser sign-in and sign-out, shared by the OAuth flow and the dashboard. */
@Controller()
@Pages()
export class SignInController {
  constructor(
    private readonly session: WebSession,
    private readonly users: UsersService,
    private readonly throttle: AttemptThrottle,
    private readonly returnOrigins: ReturnOrigins,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
    private readonly steps: SignInSteps,
    private readonly secondFactors: SecondFactors,
    private readonly offers: SignInOffers,
  ) {}

  @Get('sign-in')
  @AnonymousPage()
  async form(
    @CurrentSession() signedIn: SignedInUser | null,
    @Query('return_to') returnTo?: string,
    @Query('reauth') reauth?: string,
    @Query('login_hint') loginHint?: unknown,
  ): Promise<PageResult> {
    const target = safeReturnTo(returnTo, this.config.baseUrl);
    // An application's OpenID Connect login_hint: only a pre-filled field, the user may change it.
    const login = typeof loginHint === 'string' && loginHint.length <= MAX_LOGIN_HINT ? loginHint : undefined;
    // `reauth`: an application asked for a fresh sign-in (OpenID Connect prompt=login, max_age).
    if (signedIn && reauth !== '1') return seeOther(target);
    const notice = signedIn ? 'The application you came from asks you to sign in again.' : undefined;
    const offer = await this.offers.signIn(target);
    const destination = await this.returnOrigins.destinationOf(target);
    return view(
      (c) => signInPage({ csrfToken: c.csrfToken, returnTo: target, login, notice: notice ?? c.flash?.notice, offer, destination }),
      {
        formActions: destination.origin ? [destination.origin] : [],
      },
    );
  }

  @Post('sign-in')
  @AnonymousPage()
  async signIn(@Req() req: FastifyRequest, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const target = safeReturnTo(body.return_to, this.config.baseUrl);
    const login = typeof body.login === 'string' ? body.login : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const account = await this.users.throttleKey(login);
    const wait = await this.throttle.reserveAttempt(account, req.ip);
    if (wait > 0) {
      const error = `Too many failed attempts. ${tryAgainIn(wait)}`;
      const offer = await this.offers.signIn(target);
      const destination = await this.returnOrigins.destinationOf(target);
      return view((c) => signInPage({ csrfToken: c.csrfToken, returnTo: target, login, error, offer, destination }), {
        status: 429,
        formActions: destination.origin ? [destination.origin] : [],
        headers: { 'retry-after': String(wait) },
      });
    }
    const user = login && password ? await this.users.verifyCredentials(login, password) : null;
    if (!user) {
      this.metrics.passwordRefused('sign_in');
      const offer = await this.offers.signIn(target);
      const destination = await this.returnOrigins.destinationOf(target);
      return view((c) => signInPage({ csrfToken: c.csrfToken, returnTo: target, login, error: FAILED, offer, destination }), {
        status: 401,
        formActions: destination.origin ? [destination.origin] : [],
      });
    }
    await this.throttle.recordSuccess(account, req.ip);
    // No session until the second step, for a user who has a second factor (docs/account-security.md).
    if (await this.secondFactors.has(user.id)) return this.steps.begin(req, user.id, ['pwd'], target);
    return this.steps.signIn(req, user.id, ['pwd'], target);
  }

  @Post('sign-out')
  @AnonymousPage()
  async signOut(@Req() req: FastifyRequest): Promise<PageResult> {
    return new Redirect('/sign-in', 303, { cookies: await this.session.signOut(req) });
  }

  @Get()
  home(@SignedIn() signedIn: SignedInUser): PageResult {
    return view((c) =>
      page({
        title: 'Home',
        user: signedIn.user,
        csrfToken: c.csrfToken,
        body: html`<div class="card">
          <h1>Welcome, ${signedIn.user.name}</h1>
          <p class="lead">You are signed in as @${signedIn.user.username}.</p>
          <p>The GraphQL API is at <code>${this.config.baseUrl}/graphql</code>.</p>
        </div>`,
      }),
    );
  }
}
