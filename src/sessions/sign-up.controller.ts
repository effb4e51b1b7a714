import { Body, Controller, Get, Inject, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { DomainError } from '../errors/domain-error.js';
import { UsersService } from '../users/users.service.js';
import { fieldErrors, formText } from '../web/form-values.js';
import type { PageResult } from '../web/page-result.js';
import { Redirect, seeOther, view } from '../web/page-result.js';
import { AnonymousPage, CurrentSession, Pages } from '../web/pages.decorator.js';
import { safeReturnTo } from '../web/return-to.js';
import type { SignedInUser } from './sessions.service.js';
import { SignInThrottle, tryAgainIn } from './sign-in-throttle.js';
import { signUpPage } from './sign-up.pages.js';
import { ReturnOrigins } from './return-origins.js';
import { WebSession } from './web-session.js';

/** Account creation: on success the new user is signed in and continues where they were going. */
@Controller('sign-up')
@Pages()
@AnonymousPage()
export class SignUpController {
  constructor(
    private readonly session: WebSession,
    private readonly users: UsersService,
    private readonly throttle: SignInThrottle,
    private readonly returnOrigins: ReturnOrigins,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  async form(@CurrentSession() signedIn: SignedInUser | null, @Query('return_to') returnTo?: string): Promise<PageResult> {
    const target = safeReturnTo(returnTo, this.config.baseUrl);
    if (signedIn) return seeOther(target);
    return view((c) => signUpPage({ csrfToken: c.csrfToken, returnTo: target }), { formActions: await this.returnOrigins.of(target) });
  }

  @Post()
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
      const user = await this.throttle.settleSignUp(reservation, () => this.users.create({ ...values, password: formText(body.password) }));
      return new Redirect(target, 303, { cookies: await this.session.signIn(req, user.id) });
    } catch (err) {
      if (!(err instanceof DomainError) || (err.kind !== 'invalid' && err.kind !== 'conflict')) throw err;
      const errors = fieldErrors(err);
      return view((c) => signUpPage({ csrfToken: c.csrfToken, returnTo: target, values, errors }), {
        status: 422,
        formActions: await this.returnOrigins.of(target),
      });
    }
  }
}
