import { Injectable } from '@nestjs/common';
import type { SafeHtml } from '../web/html.js';

/**
 * Part of a sign-in page another module renders: given the page's CSRF token, its markup; `primary` when
 * it is the page's main action (nothing else to fill in).
 */
export type SignInOffer = (csrfToken: string, options?: { primary?: boolean }) => SafeHtml;

/** A way to sign in that the sign-in pages offer beside the password: passkeys (src/passkeys/). */
export interface SignInOfferProvider {
  /** Beside the password form of `/sign-in`: signing in without a password, ending at `returnTo`. */
  signIn(returnTo: string): Promise<SignInOffer | null>;
  /** On the second step (`/sign-in/second-factor`) of this pending sign-in: null when its user has no passkey. */
  secondFactor(pending: { id: string; userId: string }): Promise<SignInOffer | null>;
}

/**
 * What the sign-in pages offer besides the password and the codes. The passkeys module registers itself here when it
 * starts (it depends on this module, not the other way round); without it the page shows the password
 * form alone.
 */
@Injectable()
export class SignInOffers {
  private provider: SignInOfferProvider | null = null;

  accept(provider: SignInOfferProvider): void {
    this.provider = provider;
  }

  async signIn(returnTo: string): Promise<SignInOffer | null> {
    return this.provider ? this.provider.signIn(returnTo) : null;
  }

  async secondFactor(pending: { id: string; userId: string }): Promise<SignInOffer | null> {
    return this.provider ? this.provider.secondFactor(pending) : null;
  }
}
