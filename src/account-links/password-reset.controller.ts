import { Body, Controller, Get, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DomainError, failuresOf } from '../errors/domain-error.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { tryAgainIn } from '../sessions/attempt-throttle.js';
import { formText } from '../web/form-values.js';
import type { PageResult } from '../web/page-result.js';
import { Redirect, seeOther, view } from '../web/page-result.js';
import { AnonymousPage, CurrentSession, Pages } from '../web/pages.decorator.js';
import { checkEmailPath, forgotPasswordPage, linkProblemPage, passwordResetDonePage, resetPasswordPage } from './account-links.pages.js';
import { PasswordReset } from './password-reset.service.js';
import { WebSession } from '../sessions/web-session.js';

const PROBLEM_STATUS = { invalid: 404, used: 410, expired: 410, stale: 410 } as const;

/** "Forgot password?": ask for a link, then choose a new password with it (PasswordReset). */
@Controller()
@Pages()
@AnonymousPage()
export class PasswordResetController {
  constructor(
    private readonly resets: PasswordReset,
    private readonly session: WebSession,
  ) {}

  @Get('forgot-password')
  form(): PageResult {
    return view((c) => forgotPasswordPage({ csrfToken: c.csrfToken }));
  }

  @Post('forgot-password')
  async request(@Req() req: FastifyRequest, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const email = formText(body.email);
    let wait: number;
    try {
      wait = await this.resets.request(email, req.ip);
    } catch (err) {
      if (!(err instanceof DomainError) || err.kind !== 'invalid') throw err;
      const error = failuresOf(err)[0]!.message;
      return view((c) => forgotPasswordPage({ csrfToken: c.csrfToken, email, error }), { status: 422 });
    }
    if (wait > 0) {
      const notice = `Too many links were asked for this address or from your network. ${tryAgainIn(wait)}`;
      return view((c) => forgotPasswordPage({ csrfToken: c.csrfToken, email, notice }), {
        status: 429,
        headers: { 'retry-after': String(wait) },
      });
    }
    return seeOther(checkEmailPath('reset'));
  }

  @Get('reset-password')
  async show(@CurrentSession() signedIn: SignedInUser | null, @Query('token') token?: string): Promise<PageResult> {
    const state = await this.resets.look(token ?? '');
    if (state !== 'valid') return this.problem(state, signedIn);
    return view((c) => resetPasswordPage({ csrfToken: c.csrfToken, token: token! }));
  }

  @Post('reset-password')
  async reset(
    @CurrentSession() signedIn: SignedInUser | null,
    @Req() req: FastifyRequest,
    @Body() body: Record<string, unknown>,
  ): Promise<PageResult> {
    const token = formText(body.token);
    try {
      const outcome = await this.resets.reset(token, formText(body.password));
      if (outcome.state !== 'reset') return this.problem(outcome.state, signedIn);
    } catch (err) {
      if (!(err instanceof DomainError) || err.kind !== 'invalid') throw err;
      const error = failuresOf(err)[0]!.message;
      return view((c) => resetPasswordPage({ csrfToken: c.csrfToken, token, error }), { status: 422 });
    }
    // Every session ended, this browser's too: it signs in afresh, with its second factor if it has one.
    return new Redirect('/password-reset', 303, { cookies: await this.session.signOut(req) });
  }

  @Get('password-reset')
  done(): PageResult {
    return view(() => passwordResetDonePage());
  }

  private problem(state: keyof typeof PROBLEM_STATUS, signedIn: SignedInUser | null): PageResult {
    return view((c) => linkProblemPage({ state, about: 'reset', user: signedIn?.user ?? null, csrfToken: c.csrfToken }), {
      status: PROBLEM_STATUS[state],
    });
  }
}
