import { Body, Controller, Get, Inject, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OwnAuthentication, Public } from '../auth/public.decorator.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { UserError } from '../users/users.errors.js';
import { UsersService } from '../users/users.service.js';
import { safeReturnTo } from '../web/return-to.js';
import { sendPage } from '../web/security-headers.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { signUpPage } from './sign-up.pages.js';
import { WebSession } from './web-session.js';

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Account creation: on success the new user is signed in and continues where they were going. */
@Controller('sign-up')
@Public()
@OwnAuthentication()
export class SignUpController {
  constructor(
    private readonly session: WebSession,
    private readonly users: UsersService,
    private readonly throttle: SignInThrottle,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  async form(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Query('return_to') returnTo?: string): Promise<FastifyReply> {
    const target = safeReturnTo(returnTo, this.config.baseUrl);
    if (await this.session.current(req)) return reply.redirect(target, 303);
    return sendPage(reply, signUpPage({ csrfToken: this.session.csrfToken(req, reply), returnTo: target }));
  }

  @Post()
  async create(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Body() body: Record<string, unknown>): Promise<FastifyReply> {
    const target = safeReturnTo(body?.return_to, this.config.baseUrl);
    if (!this.session.acceptForm(req, reply)) return reply;
    const values = { username: text(body.username), email: text(body.email), name: text(body.name) };
    const reservation = await this.throttle.reserveSignUp(req.ip);
    if (!reservation.granted) {
      const wait = reservation.retryAfterSeconds;
      const minutes = Math.ceil(wait / 60);
      const reason = reservation.limit === 'accounts' ? 'Too many accounts were created' : 'Too many failed sign-ups';
      const form = signUpPage({
        csrfToken: this.session.csrfToken(req, reply),
        returnTo: target,
        values,
        notice: `${reason} from your network. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      });
      void reply.header('retry-after', String(wait));
      return sendPage(reply, form, { status: 429 });
    }
    try {
      const user = await this.throttle.settleSignUp(reservation, () => this.users.create({ ...values, password: text(body.password) }));
      await this.session.signIn(req, reply, user.id);
      return reply.redirect(target, 303);
    } catch (err) {
      if (!(err instanceof UserError) || !err.field) throw err;
      const form = signUpPage({
        csrfToken: this.session.csrfToken(req, reply),
        returnTo: target,
        values,
        errors: { [err.field]: err.message },
      });
      return sendPage(reply, form, { status: 422 });
    }
  }
}
