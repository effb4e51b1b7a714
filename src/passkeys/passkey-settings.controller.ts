import { UserError } from '../users/users.errors.js';
import { RECOVERY_CODES_FLASH_LABEL, RECOVERY_CODES_PAGE } from '../two-factor/recovery-codes.service.js';
import { Body, Controller, Get, Param, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Inject } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { Metrics } from '../metrics/metrics.js';
import { SessionsService } from '../sessions/sessions.service.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { AttemptThrottle, tryAgainIn } from '../sessions/attempt-throttle.js';
import { accountThrottleKey, UsersService } from '../users/users.service.js';
import { fieldErrors, formText } from '../web/form-values.js';
import { seeOther, view, type PageResult } from '../web/page-result.js';
import { Pages, SignedIn } from '../web/pages.decorator.js';
import { safeReturnTo } from '../web/return-to.js';
import { addPasskeyPage, confirmPasswordPage, removePasskeyPage, renamePasskeyPage } from './passkey.pages.js';
import { PasskeyError } from './passkeys.errors.js';
import { PasskeysService } from './passkeys.service.js';

/**
 * How long after signing in (or confirming the password) a session may add or remove passkeys without
 * typing the password again: GitHub's "sudo mode". Someone at a browser left signed in cannot quietly
 * add a passkey of their own, which would outlive the password.
 */
export const RECENT_SIGN_IN_MS = 15 * 60_000;

const SECURITY = '/account/security';

/** The security page's passkeys: add (after a recent sign-in), rename, remove. */
@Controller('account/passkeys')
@Pages()
export class PasskeySettingsController {
  constructor(
    private readonly passkeys: PasskeysService,
    private readonly users: UsersService,
    private readonly sessions: SessionsService,
    private readonly throttle: AttemptThrottle,
    private readonly metrics: Metrics,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('new')
  async addForm(@SignedIn() signedIn: SignedInUser): Promise<PageResult> {
    if (!this.recent(signedIn)) return this.confirmFirst('/account/passkeys/new');
    return this.addView(signedIn, {});
  }

  @Post()
  async add(@SignedIn() signedIn: SignedInUser, @Body() body: Record<string, unknown>): Promise<PageResult> {
    if (!this.recent(signedIn)) return this.confirmFirst('/account/passkeys/new');
    const name = formText(body.name);
    try {
      const { passkey, recoveryCodes } = await this.passkeys.register(
        signedIn.user.id,
        signedIn.sessionId,
        formText(body.credential),
        name,
      );
      const notice = `Passkey “${passkey.name}” added. You can sign in with it now.`;
      if (!recoveryCodes) return seeOther(`${SECURITY}#passkeys`, { path: SECURITY, notice });
      // The first second factor: signing in now takes two steps, and these codes are the way back in without it.
      return seeOther(RECOVERY_CODES_PAGE, {
        path: RECOVERY_CODES_PAGE,
        notice,
        secret: { label: RECOVERY_CODES_FLASH_LABEL, value: recoveryCodes.join(' ') },
      });
    } catch (err) {
      if (isUnverified(err)) return unverified();
      if (!(err instanceof PasskeyError) || err.kind === 'not_found') throw err;
      return this.addView(signedIn, { name, errors: fieldErrors(err) }, 422);
    }
  }

  @Get('confirm-password')
  confirmForm(@SignedIn() signedIn: SignedInUser, @Query('return_to') returnTo?: string): PageResult {
    const target = safeReturnTo(returnTo, this.config.baseUrl);
    return view((c) => confirmPasswordPage({ signedIn, csrfToken: c.csrfToken, returnTo: target }));
  }

  /** Checks the password under the sign-in throttle; the session counts as freshly signed in after it. */
  @Post('confirm-password')
  async confirm(
    @SignedIn() signedIn: SignedInUser,
    @Req() req: FastifyRequest,
    @Body() body: Record<string, unknown>,
  ): Promise<PageResult> {
    const target = safeReturnTo(body.return_to, this.config.baseUrl);
    const account = accountThrottleKey(signedIn.user.id);
    const wait = await this.throttle.reserveAttempt(account, req.ip);
    if (wait > 0) {
      const error = `Too many incorrect passwords. ${tryAgainIn(wait)}`;
      return view((c) => confirmPasswordPage({ signedIn, csrfToken: c.csrfToken, returnTo: target, error }), {
        status: 429,
        headers: { 'retry-after': String(wait) },
      });
    }
    const user = await this.users.verifyCredentials(signedIn.user.username, formText(body.password));
    if (!user || user.id !== signedIn.user.id) {
      this.metrics.passwordRefused('security');
      const error = 'Incorrect password.';
      return view((c) => confirmPasswordPage({ signedIn, csrfToken: c.csrfToken, returnTo: target, error }), { status: 422 });
    }
    await this.throttle.recordSuccess(account, req.ip);
    await this.sessions.reauthenticated(signedIn.sessionId);
    return seeOther(target);
  }

  @Get(':id/rename')
  async renameForm(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const passkey = await this.passkeys.find(signedIn.user.id, id);
    return view((c) => renamePasskeyPage({ signedIn, csrfToken: c.csrfToken, passkey }));
  }

  @Post(':id/rename')
  async rename(@SignedIn() signedIn: SignedInUser, @Param('id') id: string, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const name = formText(body.name);
    try {
      const passkey = await this.passkeys.rename(signedIn.user.id, id, name);
      return seeOther(`${SECURITY}#passkeys`, { path: SECURITY, notice: `Passkey renamed to “${passkey.name}”.` });
    } catch (err) {
      if (!(err instanceof PasskeyError) || err.code !== 'INVALID_NAME') throw err;
      const passkey = await this.passkeys.find(signedIn.user.id, id);
      return view((c) => renamePasskeyPage({ signedIn, csrfToken: c.csrfToken, passkey, name, error: err.message }), { status: 422 });
    }
  }

  @Get(':id/remove')
  async removeForm(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const passkey = await this.passkeys.find(signedIn.user.id, id);
    if (!this.recent(signedIn)) return this.confirmFirst(`/account/passkeys/${passkey.id}/remove`);
    const last = (await this.passkeys.list(signedIn.user.id)).length === 1;
    return view((c) => removePasskeyPage({ signedIn, csrfToken: c.csrfToken, passkey, last }));
  }

  @Post(':id/remove')
  async remove(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const passkey = await this.passkeys.find(signedIn.user.id, id);
    if (!this.recent(signedIn)) return this.confirmFirst(`/account/passkeys/${passkey.id}/remove`);
    await this.passkeys.remove(signedIn.user.id, passkey.id);
    return seeOther(`${SECURITY}#passkeys`, { path: SECURITY, notice: `Passkey “${passkey.name}” removed.` });
  }

  private async addView(
    signedIn: SignedInUser,
    extra: { name?: string; errors?: Record<string, string> },
    status = 200,
  ): Promise<PageResult> {
    let options: string | null;
    try {
      options = await this.passkeys.registrationOptions(signedIn.user, signedIn.sessionId);
    } catch (err) {
      if (isUnverified(err)) return unverified();
      if (!(err instanceof PasskeyError) || err.code !== 'TOO_MANY_PASSKEYS') throw err;
      return view((c) => addPasskeyPage({ signedIn, csrfToken: c.csrfToken, options: null, errors: { form: err.message } }), {
        status: 409,
      });
    }
    return view((c) => addPasskeyPage({ signedIn, csrfToken: c.csrfToken, options, ...extra }), { status });
  }

  private recent(signedIn: SignedInUser): boolean {
    const last = Math.max(
      new Date(signedIn.authTime).getTime(),
      signedIn.reauthenticatedAt ? new Date(signedIn.reauthenticatedAt).getTime() : 0,
    );
    return this.clock.now().getTime() - last < RECENT_SIGN_IN_MS;
  }

  private confirmFirst(returnTo: string): PageResult {
    return seeOther(`/account/passkeys/confirm-password?return_to=${encodeURIComponent(returnTo)}`);
  }
}

const isUnverified = (err: unknown): boolean => err instanceof UserError && err.code === 'EMAIL_NOT_VERIFIED';

/** Back to the security page, which says why: a second factor waits for the verified address. */
function unverified(): PageResult {
  return seeOther(`${SECURITY}#passkeys`, {
    path: SECURITY,
    notice: 'Verify your e-mail address before you add a passkey: follow the link we mailed to it.',
  });
}
