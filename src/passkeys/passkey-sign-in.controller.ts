import { Body, Controller, Inject, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { combineAmr } from '../auth/authentication-methods.js';
import { ReturnOrigins } from '../sessions/return-origins.js';
import { AttemptThrottle, tryAgainIn } from '../sessions/attempt-throttle.js';
import { signInPage } from '../sessions/sign-in.pages.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { SignInSteps, type PendingSignIn } from '../sessions/sign-in-steps.js';
import { secondStepPage } from '../two-factor/second-factor.pages.js';
import { SecondFactors } from '../users/second-factors.js';
import { formText } from '../web/form-values.js';
import { seeOther, view, type PageResult } from '../web/page-result.js';
import { AnonymousPage, CurrentSession, Pages } from '../web/pages.decorator.js';
import { safeReturnTo } from '../web/return-to.js';
import { PasskeyOffers, secondFactorBinding } from './passkey-offers.js';
import { PasskeyError } from './passkeys.errors.js';
import { PasskeysService } from './passkeys.service.js';

/**
 * Passkeys at sign-in. Alone (usernameless): the sign-in page's passkey form posts the browser's answer
 * here, and a verified passkey that verified its user signs in with `hwk` or `swk` and `mfa`. As the
 * second step after the password (or of a step-up, also `require=phr`): one of the pending user's
 * passkeys completes it. Refused answers are throttled per address; as a second step they also count
 * against the pending sign-in like wrong codes.
 */
@Controller('sign-in')
@Pages()
export class PasskeySignInController {
  constructor(
    private readonly passkeys: PasskeysService,
    private readonly offers: PasskeyOffers,
    private readonly steps: SignInSteps,
    private readonly secondFactors: SecondFactors,
    private readonly throttle: AttemptThrottle,
    private readonly returnOrigins: ReturnOrigins,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('passkey')
  @AnonymousPage()
  async signIn(@Req() req: FastifyRequest, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const target = safeReturnTo(body.return_to, this.config.baseUrl);
    const wait = await this.throttle.reservePasskeyAttempt(req.ip);
    if (wait > 0) return this.refused(target, `Too many failed attempts. ${tryAgainIn(wait)}`, 429, { 'retry-after': String(wait) });
    try {
      const verified = await this.passkeys.verifySignIn(formText(body.credential));
      await this.throttle.recordPasskeyAccepted(req.ip);
      return await this.steps.signIn(req, verified.userId, combineAmr([verified.method]), target);
    } catch (err) {
      if (!(err instanceof PasskeyError)) throw err;
      return this.refused(target, err.message, 401);
    }
  }

  @Post('second-factor/passkey')
  @AnonymousPage()
  async secondFactor(
    @Req() req: FastifyRequest,
    @CurrentSession() signedIn: SignedInUser | null,
    @Body() body: Record<string, unknown>,
  ): Promise<PageResult> {
    const pending = await this.steps.pending(req);
    if (!pending) return signedIn ? seeOther('/') : this.steps.holdsCookie(req) ? this.steps.startAgain('/') : seeOther('/sign-in');
    const wait = await this.throttle.reservePasskeyAttempt(req.ip);
    if (wait > 0) {
      const alert = `Too many failed attempts. ${tryAgainIn(wait)}`;
      return this.secondStep(pending, signedIn, alert, 429, { 'retry-after': String(wait) });
    }
    try {
      const verified = await this.passkeys.verifySecondFactor(pending.userId, secondFactorBinding(pending.id), formText(body.credential));
      await this.throttle.recordPasskeyAccepted(req.ip);
      return await this.steps.complete(req, pending, [verified.method]);
    } catch (err) {
      if (!(err instanceof PasskeyError)) throw err;
      if (await this.steps.failed(pending))
        return this.steps.startAgain(pending.returnTo, 'Too many failed attempts. Please sign in again.');
      return this.secondStep(pending, signedIn, err.message, 401);
    }
  }

  /** The second step's page again, with what went wrong above its forms. */
  private async secondStep(
    pending: PendingSignIn,
    signedIn: SignedInUser | null,
    alert: string,
    status: number,
    headers?: Record<string, string>,
  ): Promise<PageResult> {
    const methods = await this.secondFactors.of(pending.userId);
    const passkey = await this.offers.secondFactor(pending);
    return view(
      (c) =>
        secondStepPage({
          csrfToken: c.csrfToken,
          mode: 'code',
          methods,
          require: pending.require,
          stepUp: pending.stepUpSessionId !== null,
          returnTo: pending.returnTo,
          alert,
          user: signedIn?.user,
          passkey,
        }),
      { status, headers, formActions: await this.returnOrigins.of(pending.returnTo) },
    );
  }

  private async refused(target: string, error: string, status: number, headers?: Record<string, string>): Promise<PageResult> {
    const offer = await this.offers.signIn(target);
    return view((c) => signInPage({ csrfToken: c.csrfToken, returnTo: target, error, offer }), {
      status,
      headers,
      formActions: await this.returnOrigins.of(target),
    });
  }
}
