import { Body, Controller, Get, Inject, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { DomainError } from '../errors/domain-error.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { AttemptThrottle, tryAgainIn } from '../sessions/attempt-throttle.js';
import { fieldErrors, formText } from '../web/form-values.js';
import type { PageResult } from '../web/page-result.js';
import { seeOther, view } from '../web/page-result.js';
import { AnonymousPage, CurrentSession, Pages } from '../web/pages.decorator.js';
import { safeReturnTo } from '../web/return-to.js';
import { checkEmailPage, checkEmailPath } from './account-links.pages.js';
import { SignUpService } from './sign-up.service.js';
import { signUpPage } from './sign-up.pages.js';

/**
 * Account creation. The answer does not say whether the address had an account (SignUpService): a valid
 * sign-up always leads to "check your e-mail", and nobody is signed in; the new user signs in (unverified
 * accounts may) and continues where they were going from there.
 */
@Controller()
@Pages()
@AnonymousPage()
export class SignUpController {
  constructor(
    private readonly signUps: SignUpService,
    private readonly throttle: AttemptThrottle,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('sign-up')
  form(@CurrentSession() signedIn: SignedInUser | null, @Query('return_to') returnTo?: string): PageResult {
    const target = safeReturnTo(returnTo, this.config.baseUrl);
    if (signedIn) return seeOther(target);
    return view((c) => signUpPage({ csrfToken: c.csrfToken, returnTo: target }));
  }

  @Post('sign-up')
  async create(@Req() req: FastifyRequest, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const target = safeReturnTo(body.return_to, this.config.baseUrl);
    const values = { username: formText(body.username), email: formText(body.email), name: formText(body.name) };
    const reservation = await this.throttle.reserveSignUp(req.ip);
    if (!reservation.granted) {
      const wait = reservation.retryAfterSeconds;
      const reason = reservation.limit === 'accounts' ? 'Too many accounts were created' : 'Too many failed sign-ups';
      const notice = `${reason} from your network. ${tryAgainIn(wait)}`;
      return view((c) => signUpPage({ csrfToken: c.csrfToken, returnTo: target, values, notice }), {
        status: 429,
        headers: { 'retry-after': String(wait) },
      });
    }
    try {
      // A sign-up with a taken address counts as an account created: counting it otherwise would tell.
      await this.throttle.settleSignUp(reservation, () => this.signUps.signUp({ ...values, password: formText(body.password) }));
      return seeOther(checkEmailPath('sign-up', target));
    } catch (err) {
      if (!(err instanceof DomainError) || (err.kind !== 'invalid' && err.kind !== 'conflict')) throw err;
      const errors = fieldErrors(err);
      return view((c) => signUpPage({ csrfToken: c.csrfToken, returnTo: target, values, errors }), { status: 422 });
    }
  }

  @Get('check-email')
  checkEmail(@Query('about') about?: string, @Query('return_to') returnTo?: string): PageResult {
    const target = safeReturnTo(returnTo, this.config.baseUrl);
    return view(() => checkEmailPage({ about: about === 'reset' ? 'reset' : 'sign-up', returnTo: target }));
  }
}
