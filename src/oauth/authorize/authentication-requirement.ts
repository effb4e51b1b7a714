import { Injectable } from '@nestjs/common';
import { Acr, acrOf, acrSatisfies } from '../../auth/authentication-methods.js';
import type { SignedInUser } from '../../web/page-sessions.js';
import { SecondFactors } from '../../users/second-factors.js';

/**
 * What a signed-in user's session lacks for the class of sign-in a client asked for (`acr_values`):
 * - `satisfied`: the session reaches it (a passkey sign-in, `phr`, satisfies `aal2` too);
 * - `step-up`: the user has what it takes (any second factor for `aal2`, a passkey for `phr`), and proves
 *   it on the second-step page (`/sign-in/second-factor`), which raises the session's amr;
 * - `unmet`: the account has no such factor: the client hears `unmet_authentication_requirements`
 *   (OpenID Connect Unmet Authentication Requirements 1.0).
 */
export type RequirementCheck = { outcome: 'satisfied' } | { outcome: 'step-up'; require: Exclude<Acr, 'aal1'> } | { outcome: 'unmet' };

@Injectable()
export class AuthenticationRequirement {
  constructor(private readonly secondFactors: SecondFactors) {}

  async check(signedIn: Pick<SignedInUser, 'amr' | 'user'>, want: Acr | undefined): Promise<RequirementCheck> {
    if (want === undefined || want === 'aal1' || acrSatisfies(acrOf(signedIn.amr), want)) return { outcome: 'satisfied' };
    const methods = await this.secondFactors.of(signedIn.user.id);
    const able = want === 'phr' ? methods.passkeys > 0 : methods.totp || methods.passkeys > 0;
    return able ? { outcome: 'step-up', require: want } : { outcome: 'unmet' };
  }
}

/** The second-step page, coming back to `returnTo` once the session has the second factor. */
export function stepUpLocation(returnTo: string, require: Exclude<Acr, 'aal1'>): string {
  return `/sign-in/second-factor?return_to=${encodeURIComponent(returnTo)}${require === 'phr' ? '&require=phr' : ''}`;
}
