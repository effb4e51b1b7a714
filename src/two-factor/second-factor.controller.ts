import { Body, Controller, Get, Inject, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { acrOf, acrSatisfies } from '../auth/authentication-methods.js';
import { ReturnOrigins } from '../sessions/return-origins.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { SignInSteps, type PendingSignIn } from '../sessions/sign-in-steps.js';
import { SignInOffers } from '../sessions/sign-in-offers.js';
import { AttemptThrottle, tryAgainIn } from '../sessions/attempt-throttle.js';
import { SecondFactors } from '../users/second-factors.js';
import { formText } from '../web/form-values.js';
import type { PageResult } from '../web/page-result.js';
import { seeOther, view } from '../web/page-result.js';
import { AnonymousPage, CurrentSession, Pages } from '../web/pages.decorator.js';
import { safeReturnTo } from '../web/return-to.js';
import { RecoveryCodes, normaliseRecoveryCode } from './recovery-codes.service.js';
import { noSecondFactorPage, SecondStepMode, secondStepPage } from './second-factor.pages.js';
import { normaliseTotpCode, TotpService } from './totp.service.js';
import { CODE_MESSAGES } from './two-factor.errors.js';

/**
 * The second step of signing in, `/sign-in/second-factor` (docs/account-security.md): after the
 * password, a user with a second factor proves it here before any session exists. Also the step-up of a
 * signed-in session an application asks more of (`?return_to=…[&require=phr]`). Wrong codes are
 * throttled like passwords, per account and per address, across instances; five wrong codes end the
 * pending sign-in and the password is asked again.
 */
@Controller('sign-in/second-factor')
@Pages()
@AnonymousPage()
export class SecondFactorController {
  constructor(
    private readonly steps: SignInSteps,
    private readonly secondFactors: SecondFactors,
    private readonly totp: TotpService,
    private readonly recoveryCodes: RecoveryCodes,
    private readonly throttle: AttemptThrottle,
    private readonly returnOrigins: ReturnOrigins,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly offers: SignInOffers,
  ) {}

  @Get()
  async show(
    @Req() req: FastifyRequest,
    @CurrentSession() signedIn: SignedInUser | null,
    @Query('return_to') returnTo?: string,
    @Query('require') require?: string,
    @Query('method') method?: string,
  ): Promise<PageResult> {
    if (returnTo !== undefined)
      return this.stepUp(req, signedIn, safeReturnTo(returnTo, this.config.baseUrl), require === 'phr' ? 'phr' : 'aal2');
    const pending = await this.steps.pending(req);
    if (!pending) return this.noPending(req, signedIn);
    return this.render(pending, signedIn, { mode: method === 'recovery' ? 'recovery' : 'code' });
  }

  @Post()
  async verify(
    @Req() req: FastifyRequest,
    @CurrentSession() signedIn: SignedInUser | null,
    @Body() body: Record<string, unknown>,
  ): Promise<PageResult> {
    const pending = await this.steps.pending(req);
    if (!pending) return this.noPending(req, signedIn);
    const mode: SecondStepMode = formText(body.method) === 'recovery' ? 'recovery' : 'code';
    if (pending.require === 'phr') return this.render(pending, signedIn, { mode, status: 422, alert: 'Only a passkey will do here.' });
    const typed = formText(mode === 'recovery' ? body.recovery_code : body.code);
    const wellFormed = mode === 'recovery' ? normaliseRecoveryCode(typed) !== null : normaliseTotpCode(typed) !== null;
    if (!wellFormed) {
      const error = mode === 'recovery' ? CODE_MESSAGES.recoveryMalformed : CODE_MESSAGES.malformed;
      return this.render(pending, signedIn, { mode, status: 422, error });
    }
    const wait = await this.throttle.reserveSecondStep(pending.userId, req.ip);
    if (wait > 0) {
      const alert = `Too many incorrect codes. ${tryAgainIn(wait)}`;
      return this.render(pending, signedIn, { mode, status: 429, alert, headers: { 'retry-after': String(wait) } });
    }
    const outcome =
      mode === 'recovery'
        ? (await this.recoveryCodes.use(pending.userId, typed))
          ? 'ok'
          : 'wrong'
        : await this.totp.verify(pending.userId, typed);
    if (outcome === 'ok') {
      await this.throttle.recordSecondStepSuccess(pending.userId, req.ip);
      // A recovery code is a one-time password too (RFC 8176 has nothing closer): 'otp' either way.
      return this.steps.complete(req, pending, ['otp']);
    }
    if (await this.steps.failed(pending)) return this.steps.startAgain(pending.returnTo, 'Too many incorrect codes. Please sign in again.');
    const error = outcome === 'replayed' ? CODE_MESSAGES.replayed : mode === 'recovery' ? CODE_MESSAGES.recoveryWrong : CODE_MESSAGES.wrong;
    return this.render(pending, signedIn, { mode, status: 422, error });
  }

  /**
   * A signed-in session asked for more by an application (acr_values): straight back when it already
   * has it, else a pending step-up of this session.
   */
  private async stepUp(req: FastifyRequest, signedIn: SignedInUser | null, returnTo: string, require: 'aal2' | 'phr'): Promise<PageResult> {
    if (!signedIn) return seeOther(`/sign-in?return_to=${encodeURIComponent(returnTo)}`);
    if (acrSatisfies(acrOf(signedIn.amr), require)) return seeOther(returnTo);
    if (!(await this.secondFactors.has(signedIn.user.id)))
      return view((c) => noSecondFactorPage({ csrfToken: c.csrfToken, user: signedIn.user, returnTo }), { status: 403 });
    return this.steps.begin(req, signedIn.user.id, signedIn.amr, returnTo, { stepUpSessionId: signedIn.sessionId, require });
  }

  /** No pending sign-in (none, expired, or ended by too many wrong codes): back to the start. */
  private noPending(req: FastifyRequest, signedIn: SignedInUser | null): PageResult {
    if (signedIn) return seeOther('/');
    return this.steps.holdsCookie(req) ? this.steps.startAgain('/') : seeOther('/sign-in');
  }

  private async render(
    pending: PendingSignIn,
    signedIn: SignedInUser | null,
    o: { mode: SecondStepMode; status?: number; error?: string; alert?: string; headers?: Record<string, string> },
  ): Promise<PageResult> {
    const methods = await this.secondFactors.of(pending.userId);
    const passkey = await this.offers.secondFactor(pending);
    return view(
      (c) =>
        secondStepPage({
          csrfToken: c.csrfToken,
          mode: o.mode,
          methods,
          require: pending.require,
          stepUp: pending.stepUpSessionId !== null,
          returnTo: pending.returnTo,
          error: o.error,
          alert: o.alert,
          user: signedIn?.user,
          passkey,
        }),
      { status: o.status, headers: o.headers, formActions: await this.returnOrigins.of(pending.returnTo) },
    );
  }
}
