import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { SignedInUser } from '../../web/page-sessions.js';
import { AttemptThrottle, tryAgainIn } from '../../sessions/attempt-throttle.js';
import type { PageResult } from '../../web/page-result.js';
import { seeOther, view } from '../../web/page-result.js';
import { DeviceAuthorizationsService, DeviceCodeLookup } from './device-authorizations.service.js';
import { deviceCodePage, deviceConsentPage } from './device.pages.js';
import { formatUserCode, normalizeUserCode } from './user-code.js';
import { profileCsp } from '../authorize/consent.view.js';

const MALFORMED = 'That is not a code from Agora: codes are 8 letters, like BCDF-GHJK. Check the code your device shows.';
const UNKNOWN = 'No device is waiting for this code. Check it against the one your device shows, or start again on the device.';
const EXPIRED = 'This code has expired. Start again on your device to get a new one.';
const DECIDED = 'This code has already been used. Start again on your device if it is still waiting.';

/**
 * The verification page's steps (RFC 8628 §3.3): a signed-in user enters the code their device shows,
 * sees what the application asks for (always: a device authorization is never remembered), and approves
 * or denies it.
 *
 * A link with the code (`verification_uri_complete`, `?user_code=`) only fills the form in: the user
 * still confirms that it is the code their device shows (RFC 8628 §3.3.1) by submitting it. Such a link
 * can be followed by any site a signed-in user visits, so the GET looks nothing up and counts nothing;
 * only a code the user submits (a POST with the form's CSRF token, which no other site can forge) is
 * looked up, and each one that does not exist counts against the user and the address
 * (AttemptThrottle), so codes cannot be guessed, and no one else can spend a user's attempts.
 */
@Injectable()
export class DeviceVerification {
  constructor(
    private readonly devices: DeviceAuthorizationsService,
    private readonly throttle: AttemptThrottle,
  ) {}

  /** The form, empty or filled in by a link. */
  show(signedIn: SignedInUser, typed: unknown): PageResult {
    const { user } = signedIn;
    if (typeof typed !== 'string' || typed.trim() === '') {
      return view((c) => deviceCodePage({ user, csrfToken: c.csrfToken, notice: c.flash?.notice }));
    }
    const userCode = normalizeUserCode(typed);
    if (!userCode) return view((c) => deviceCodePage({ user, csrfToken: c.csrfToken, userCode: typed, error: MALFORMED }), { status: 400 });
    return view((c) => deviceCodePage({ user, csrfToken: c.csrfToken, userCode: formatUserCode(userCode), prefilled: true }));
  }

  /** The code the user submitted (no `decision`: shows the consent screen), or their decision on it. */
  async decide(req: FastifyRequest, signedIn: SignedInUser, body: Record<string, unknown>): Promise<PageResult> {
    const { user } = signedIn;
    const typed = typeof body.user_code === 'string' ? body.user_code : '';
    const refused = (error: string, status: number, headers?: Record<string, string>) =>
      view((c) => deviceCodePage({ user, csrfToken: c.csrfToken, userCode: typed, error }), { status, headers });
    if (body.decision !== undefined && body.decision !== 'approve' && body.decision !== 'deny')
      return refused('The form must say decision=approve or decision=deny.', 400);
    const found = await this.find(req, signedIn, typed);
    if ('error' in found) return refused(found.error, found.status, found.headers);
    // The application's logo, from its own origin only.
    if (body.decision === undefined)
      return view((c) => deviceConsentPage({ user, csrfToken: c.csrfToken, ...found }), profileCsp(found.profile));
    const decision = await this.devices.decide(
      normalizeUserCode(typed)!,
      { id: user.id, authTime: signedIn.authTime, amr: signedIn.amr, sessionId: signedIn.sessionId },
      body.decision === 'approve',
    );
    if (decision === 'approved') {
      return seeOther('/oauth/device', {
        path: '/oauth/device',
        notice: `${found.applicationName} is connected to your account. Return to your device: it continues by itself.`,
      });
    }
    if (decision === 'denied') {
      return seeOther('/oauth/device', { path: '/oauth/device', notice: `Denied: ${found.applicationName} was not given access.` });
    }
    // Decided or expired between the lookup and now.
    return refused(decision === 'expired' ? EXPIRED : DECIDED, 400);
  }

  /** The pending authorization a typed code names, or the message for the page (wrong codes counted first). */
  private async find(
    req: FastifyRequest,
    signedIn: SignedInUser,
    typed: string,
  ): Promise<Extract<DeviceCodeLookup, { found: 'pending' }> | { error: string; status: number; headers?: Record<string, string> }> {
    const userCode = normalizeUserCode(typed);
    if (!userCode) return { error: MALFORMED, status: 400 };
    const wait = await this.throttle.reserveDeviceCodeAttempt(signedIn.user.id, req.ip);
    if (wait > 0) return { error: `Too many wrong codes. ${tryAgainIn(wait)}`, status: 429, headers: { 'retry-after': String(wait) } };
    const found = await this.devices.lookup(userCode);
    if (found.found === false) return { error: UNKNOWN, status: 400 };
    await this.throttle.recordDeviceCodeFound(signedIn.user.id, req.ip);
    if (found.found !== 'pending') return { error: found.found === 'expired' ? EXPIRED : DECIDED, status: 400 };
    return found;
  }
}
