import { UserError } from '../users/users.errors.js';
import { Body, Controller, Get, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { SignedInUser } from '../web/page-sessions.js';
import { AttemptThrottle, tryAgainIn } from '../sessions/attempt-throttle.js';
import { RECOVERY_CODES_FLASH_LABEL, RECOVERY_CODES_PAGE, RecoveryCodes } from '../two-factor/recovery-codes.service.js';
import { TotpService } from '../two-factor/totp.service.js';
import { TwoFactorError } from '../two-factor/two-factor.errors.js';
import { SecondFactors } from '../users/second-factors.js';
import { accountThrottleKey, UsersService } from '../users/users.service.js';
import { formText } from '../web/form-values.js';
import type { PageResult } from '../web/page-result.js';
import { seeOther, view } from '../web/page-result.js';
import { Pages, SignedIn } from '../web/pages.decorator.js';
import { Metrics } from '../metrics/metrics.js';
import { disableTotpPage, recoveryCodesPage, totpEnrolmentPage } from './two-factor.pages.js';

const SECURITY = '/account/security';
const RECOVERY_CODES = RECOVERY_CODES_PAGE;
const RECOVERY_CODES_LABEL = RECOVERY_CODES_FLASH_LABEL;

/**
 * The security page's two-factor forms (docs/account-security.md): setting up the authenticator app
 * (confirmed by a code from it and the password), the recovery codes (shown once, through the one-time flash; new ones
 * need the password), and turning the app off (needs the password). Password checks count against the
 * sign-in throttle, as on the security page.
 */
@Controller('account/two-factor')
@Pages()
export class TwoFactorPagesController {
  constructor(
    private readonly totp: TotpService,
    private readonly recoveryCodes: RecoveryCodes,
    private readonly secondFactors: SecondFactors,
    private readonly users: UsersService,
    private readonly throttle: AttemptThrottle,
    private readonly metrics: Metrics,
  ) {}

  @Post('totp/start')
  async start(@SignedIn() signedIn: SignedInUser): Promise<PageResult> {
    try {
      await this.totp.startEnrolment(signedIn.user.id);
    } catch (err) {
      if (err instanceof TwoFactorError) return seeOther(SECURITY, { path: SECURITY, notice: err.message });
      if (err instanceof UserError && err.code === 'EMAIL_NOT_VERIFIED') {
        const notice = 'Verify your e-mail address before you turn on two-factor authentication: follow the link we mailed to it.';
        return seeOther(SECURITY, { path: SECURITY, notice });
      }
      throw err;
    }
    return seeOther('/account/two-factor/totp');
  }

  @Get('totp')
  async enrolment(@SignedIn() signedIn: SignedInUser): Promise<PageResult> {
    return this.enrolmentView(signedIn);
  }

  /**
   * Turns the app on: a code from it, and the current password (as GitHub asks for "sudo mode"): someone
   * at an unattended session must not be able to put the account behind an app only they hold.
   */
  @Post('totp')
  async confirm(
    @SignedIn() signedIn: SignedInUser,
    @Req() req: FastifyRequest,
    @Body() body: Record<string, unknown>,
  ): Promise<PageResult> {
    const refused = await this.checkPassword(signedIn, req, formText(body.current_password), (status, error, headers) =>
      this.enrolmentView(signedIn, { currentPassword: error }, status, headers),
    );
    if (refused) return refused;
    let codes: string[] | null;
    try {
      codes = await this.totp.confirm(signedIn.user.id, formText(body.code));
    } catch (err) {
      if (!(err instanceof TwoFactorError)) throw err;
      if (err.code === 'WRONG_CODE') return this.enrolmentView(signedIn, { code: err.message }, 422);
      return seeOther(SECURITY, { path: SECURITY, notice: err.message });
    }
    const notice = 'Two-factor authentication is on: signing in now asks for a code from your app.';
    if (!codes) return seeOther(SECURITY, { path: SECURITY, notice });
    return seeOther(RECOVERY_CODES, { path: RECOVERY_CODES, notice, secret: { label: RECOVERY_CODES_LABEL, value: codes.join(' ') } });
  }

  @Get('recovery-codes')
  async showRecoveryCodes(@SignedIn() signedIn: SignedInUser): Promise<PageResult> {
    const methods = await this.secondFactors.of(signedIn.user.id);
    return view((c) => {
      const secret = c.flash?.secret?.label === RECOVERY_CODES_LABEL ? c.flash.secret.value.split(' ') : null;
      return recoveryCodesPage({
        signedIn,
        csrfToken: c.csrfToken,
        codes: secret,
        left: methods.recoveryCodesLeft,
        notice: c.flash?.notice,
      });
    });
  }

  @Post('recovery-codes')
  async regenerate(
    @SignedIn() signedIn: SignedInUser,
    @Req() req: FastifyRequest,
    @Body() body: Record<string, unknown>,
  ): Promise<PageResult> {
    const methods = await this.secondFactors.of(signedIn.user.id);
    const page = (status: number, error: string, headers?: Record<string, string>) =>
      view((c) => recoveryCodesPage({ signedIn, csrfToken: c.csrfToken, codes: null, left: methods.recoveryCodesLeft, error }), {
        status,
        headers,
      });
    const refused = await this.checkPassword(signedIn, req, formText(body.current_password), page);
    if (refused) return refused;
    if (!methods.totp && methods.passkeys === 0) return seeOther(SECURITY, { path: SECURITY, notice: 'Set up a second factor first.' });
    const codes = await this.recoveryCodes.regenerate(signedIn.user.id);
    return seeOther(RECOVERY_CODES, {
      path: RECOVERY_CODES,
      notice: 'New recovery codes made: the old ones no longer work.',
      secret: { label: RECOVERY_CODES_LABEL, value: codes.join(' ') },
    });
  }

  @Get('disable')
  async confirmDisable(@SignedIn() signedIn: SignedInUser): Promise<PageResult> {
    const methods = await this.secondFactors.of(signedIn.user.id);
    if (!methods.totp) return seeOther(SECURITY);
    return view((c) => disableTotpPage({ signedIn, csrfToken: c.csrfToken, lastFactor: methods.passkeys === 0 }));
  }

  @Post('disable')
  async disable(
    @SignedIn() signedIn: SignedInUser,
    @Req() req: FastifyRequest,
    @Body() body: Record<string, unknown>,
  ): Promise<PageResult> {
    const methods = await this.secondFactors.of(signedIn.user.id);
    const page = (status: number, error: string, headers?: Record<string, string>) =>
      view((c) => disableTotpPage({ signedIn, csrfToken: c.csrfToken, lastFactor: methods.passkeys === 0, error }), { status, headers });
    const refused = await this.checkPassword(signedIn, req, formText(body.current_password), page);
    if (refused) return refused;
    try {
      await this.totp.disable(signedIn.user.id);
    } catch (err) {
      if (!(err instanceof TwoFactorError)) throw err;
      return seeOther(SECURITY, { path: SECURITY, notice: err.message });
    }
    return seeOther(SECURITY, { path: SECURITY, notice: 'Two-factor authentication with an app is off.' });
  }

  /**
   * The current password, checked under the sign-in throttle (as the security page's forms do): null
   * when right, else the form again with the error beside the field (422, or 429 with Retry-After).
   */
  private async checkPassword(
    signedIn: SignedInUser,
    req: FastifyRequest,
    password: string,
    page: (status: number, error: string, headers?: Record<string, string>) => PageResult | Promise<PageResult>,
  ): Promise<PageResult | null> {
    const account = accountThrottleKey(signedIn.user.id);
    const wait = await this.throttle.reserveAttempt(account, req.ip);
    if (wait > 0) return page(429, `Too many incorrect passwords. ${tryAgainIn(wait)}`, { 'retry-after': String(wait) });
    const user = password ? await this.users.verifyCredentials(signedIn.user.username, password) : null;
    if (!user || user.id !== signedIn.user.id) {
      this.metrics.passwordRefused('security');
      return page(422, 'Current password is incorrect');
    }
    await this.throttle.recordSuccess(account, req.ip);
    return null;
  }

  private async enrolmentView(
    signedIn: SignedInUser,
    errors: { code?: string; currentPassword?: string } = {},
    status = 200,
    headers?: Record<string, string>,
  ): Promise<PageResult> {
    const enrolment = await this.totp.enrolment(signedIn.user.id, signedIn.user.username);
    if (!enrolment) return seeOther(`${SECURITY}#two-factor`);
    return view((c) => totpEnrolmentPage({ signedIn, csrfToken: c.csrfToken, enrolment, errors }), { status, headers });
  }
}
