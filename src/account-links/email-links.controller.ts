import { Body, Controller, Get, Inject, Post, Query } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { tryAgainIn } from '../sessions/attempt-throttle.js';
import { formText } from '../web/form-values.js';
import type { PageResult } from '../web/page-result.js';
import { seeOther, view } from '../web/page-result.js';
import { AnonymousPage, CurrentSession, Pages, SignedIn } from '../web/pages.decorator.js';
import { safeReturnTo } from '../web/return-to.js';
import { emailVerifiedPage, linkProblemPage, resendRefusedPage, verifyEmailPage } from './account-links.pages.js';
import { EmailVerification } from './email-verification.service.js';

const PROBLEM_STATUS = { invalid: 404, used: 410, expired: 410, stale: 410, taken: 409 } as const;

/**
 * The links that prove an address: the page a link opens (a button, as mail scanners open links), the
 * POST that follows it, and "Send the link again" for a signed-in user whose address is not verified.
 */
@Controller()
@Pages()
export class EmailLinksController {
  constructor(
    private readonly verification: EmailVerification,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('verify-email')
  @AnonymousPage()
  async show(@CurrentSession() signedIn: SignedInUser | null, @Query('token') token?: string): Promise<PageResult> {
    const user = signedIn?.user ?? null;
    const found = await this.verification.look(token ?? '');
    if (found.state !== 'valid') {
      return view((c) => linkProblemPage({ state: found.state, about: 'verify', user, csrfToken: c.csrfToken }), {
        status: PROBLEM_STATUS[found.state],
      });
    }
    return view((c) => verifyEmailPage({ csrfToken: c.csrfToken, token: token!, purpose: found.purpose, email: found.email, user }));
  }

  @Post('verify-email')
  @AnonymousPage()
  async follow(@CurrentSession() signedIn: SignedInUser | null, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const outcome = await this.verification.follow(formText(body.token));
    if (outcome.state === 'verified') return seeOther('/email-verified');
    if (outcome.state === 'changed') return seeOther('/email-verified?changed=1');
    const user = signedIn?.user ?? null;
    return view((c) => linkProblemPage({ state: outcome.state, about: 'verify', user, csrfToken: c.csrfToken }), {
      status: PROBLEM_STATUS[outcome.state],
    });
  }

  @Get('email-verified')
  @AnonymousPage()
  verified(@CurrentSession() signedIn: SignedInUser | null, @Query('changed') changed?: string): PageResult {
    return view((c) => emailVerifiedPage({ changed: changed === '1', user: signedIn?.user ?? null, csrfToken: c.csrfToken }));
  }

  @Post('account/email/verification')
  async resend(@SignedIn() signedIn: SignedInUser, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const back = safeReturnTo(body.return_to, this.config.baseUrl);
    const path = back.split('?')[0]!;
    const outcome = await this.verification.resend(signedIn.user.id);
    if (outcome.sent) return seeOther(back, { path, notice: `We sent a new link to ${outcome.email}. It works for 24 hours.` });
    if ('verified' in outcome) return seeOther(back, { path, notice: 'Your e-mail address is verified already.' });
    const wait = outcome.retryAfterSeconds;
    const message = `We sent this account or this address too many links in the last hour. ${tryAgainIn(wait)}`;
    return view((c) => resendRefusedPage({ message, returnTo: back, user: signedIn.user, csrfToken: c.csrfToken }), {
      status: 429,
      headers: { 'retry-after': String(wait) },
    });
  }
}
