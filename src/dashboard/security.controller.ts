import { Body, Controller, Get, Param, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DomainError, failuresOf } from '../errors/domain-error.js';
import { SessionsService } from '../sessions/sessions.service.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { AttemptThrottle, tryAgainIn } from '../sessions/attempt-throttle.js';
import { WebSession } from '../sessions/web-session.js';
import { accountThrottleKey, UsersService } from '../users/users.service.js';
import { fieldErrors, formText } from '../web/form-values.js';
import type { PageResult } from '../web/page-result.js';
import { Redirect, seeOther, view } from '../web/page-result.js';
import { Pages, SignedIn } from '../web/pages.decorator.js';
import { describeBrowser } from '../sessions/browser-description.js';
import { confirmSignOutEverywherePage, SecurityPageOptions, securityPage, when } from './security.pages.js';
import { Metrics } from '../metrics/metrics.js';
import { SecondFactors } from '../users/second-factors.js';
import { PasskeysService } from '../passkeys/passkeys.service.js';
import { EmailVerification } from '../account-links/email-verification.service.js';
import { PasswordChange } from '../account-links/password-change.service.js';

const isInvalid = (err: unknown): err is DomainError => err instanceof DomainError && err.kind !== 'forbidden' && err.kind !== 'not_found';

/** The security page: change password (other sessions end), change e-mail, active sessions and signing out everywhere. */
@Controller('account')
@Pages()
export class SecurityController {
  constructor(
    private readonly users: UsersService,
    private readonly sessions: SessionsService,
    private readonly session: WebSession,
    private readonly throttle: AttemptThrottle,
    private readonly metrics: Metrics,
    private readonly passwordChange: PasswordChange,
    private readonly secondFactors: SecondFactors,
    private readonly passkeys: PasskeysService,
    private readonly verification: EmailVerification,
  ) {}

  @Get('security')
  show(@SignedIn() signedIn: SignedInUser): Promise<PageResult> {
    return this.securityView(signedIn, {});
  }

  @Post('password')
  async changePassword(
    @SignedIn() signedIn: SignedInUser,
    @Req() req: FastifyRequest,
    @Body() body: Record<string, unknown>,
  ): Promise<PageResult> {
    const refused = await this.guessing(signedIn, req, 'passwordErrors');
    if (refused) return refused;
    let ended: number;
    try {
      ended = await this.passwordChange.byUser(signedIn.user.id, signedIn.sessionId, {
        currentPassword: formText(body.current_password),
        newPassword: formText(body.new_password),
      });
    } catch (err) {
      if (!isInvalid(err)) throw err;
      await this.settle(signedIn, req, err);
      return this.securityView(signedIn, { passwordErrors: fieldErrors(err) }, 422);
    }
    await this.throttle.recordSuccess(accountKey(signedIn), req.ip);
    const others = ended === 0 ? '' : ` ${ended === 1 ? 'Your other session was' : `Your ${ended} other sessions were`} signed out.`;
    return seeOther('/account/security', { path: '/account/security', notice: `Password changed.${others}` });
  }

  @Post('email')
  async changeEmail(
    @SignedIn() signedIn: SignedInUser,
    @Req() req: FastifyRequest,
    @Body() body: Record<string, unknown>,
  ): Promise<PageResult> {
    const refused = await this.guessing(signedIn, req, 'emailErrors');
    if (refused) return refused;
    const email = formText(body.email);
    try {
      const outcome = await this.verification.requestChange(signedIn.user.id, { currentPassword: formText(body.current_password), email });
      await this.throttle.recordSuccess(accountKey(signedIn), req.ip);
      if (!outcome.sent) {
        const error = `Too many changes of address in the last hour, for this account or to this address. ${tryAgainIn(outcome.retryAfterSeconds)}`;
        return this.securityView(signedIn, { emailErrors: { email: error }, email }, 429, {
          'retry-after': String(outcome.retryAfterSeconds),
        });
      }
      return seeOther('/account/security', {
        path: '/account/security',
        notice: `We sent a link to ${outcome.email}. Your address changes when you follow it; until then it stays ${signedIn.user.email}.`,
      });
    } catch (err) {
      if (!isInvalid(err)) throw err;
      await this.settle(signedIn, req, err);
      return this.securityView(signedIn, { emailErrors: fieldErrors(err), email }, 422);
    }
  }

  /**
   * The current password these forms ask for is checked under the sign-in throttle (the same count as
   * signing in: someone at an unattended session cannot guess it without limit). A 429 page when the
   * account or address is over its limit, else null with the attempt counted.
   */
  private async guessing(signedIn: SignedInUser, req: FastifyRequest, form: 'passwordErrors' | 'emailErrors'): Promise<PageResult | null> {
    const wait = await this.throttle.reserveAttempt(accountKey(signedIn), req.ip);
    if (wait === 0) return null;
    const error = `Too many incorrect passwords. ${tryAgainIn(wait)}`;
    // The whole page as it stands (a pending change of address, a second factor required), with the refusal.
    return this.securityView(signedIn, { [form]: { currentPassword: error } }, 429, { 'retry-after': String(wait) });
  }

  /** A refusal that was not about the current password takes back the attempt it counted. */
  private async settle(signedIn: SignedInUser, req: FastifyRequest, err: DomainError): Promise<void> {
    if (failuresOf(err).some((failure) => failure.code === 'WRONG_PASSWORD')) this.metrics.passwordRefused('security');
    else await this.throttle.recordSuccess(accountKey(signedIn), req.ip);
  }

  /** Signs out one other browser at once (GitHub's "Revoke" beside a session); this browser signs out from the menu. */
  @Post('sessions/:id/sign-out')
  async signOutSession(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    if (id === signedIn.sessionId) return seeOther('/account/security#sessions');
    const ended = await this.sessions.endOne(signedIn.user.id, id);
    return seeOther('/account/security#sessions', {
      path: '/account/security',
      notice: `Signed out ${describeBrowser(ended.userAgent)} (signed in ${when(ended.signedInAt)}).`,
    });
  }

  @Get('sessions/sign-out-everywhere')
  async confirmSignOutEverywhere(@SignedIn() signedIn: SignedInUser): Promise<PageResult> {
    const count = (await this.sessions.listForUser(signedIn.user.id)).length;
    return view((c) => confirmSignOutEverywherePage({ signedIn, csrfToken: c.csrfToken, count }));
  }

  @Post('sessions/sign-out-everywhere')
  async signOutEverywhere(@SignedIn() signedIn: SignedInUser, @Req() req: FastifyRequest): Promise<PageResult> {
    await this.sessions.endAllFor(signedIn.user.id);
    return new Redirect('/sign-in', 303, { cookies: await this.session.signOut(req) });
  }

  private async securityView(
    signedIn: SignedInUser,
    extra: Partial<SecurityPageOptions>,
    status = 200,
    headers?: Record<string, string>,
  ): Promise<PageResult> {
    const sessions = await this.sessions.listForUser(signedIn.user.id);
    const twoFactor = await this.secondFactors.of(signedIn.user.id);
    const passkeys = await this.passkeys.list(signedIn.user.id);
    const pendingEmail = await this.verification.pendingChange(signedIn.user.id);
    const secondFactorRequired = await this.secondFactors.requiredOf(signedIn.user.id);
    return view(
      (c) =>
        securityPage({
          signedIn,
          csrfToken: c.csrfToken,
          sessions,
          twoFactor,
          passkeys,
          pendingEmail,
          secondFactorRequired,
          notice: c.flash?.notice,
          ...extra,
        }),
      { status, headers },
    );
  }
}

/** The throttle's key for this user: the same as signing in. */
function accountKey(signedIn: SignedInUser): string {
  return accountThrottleKey(signedIn.user.id);
}
