import { Injectable, OnModuleInit } from '@nestjs/common';
import { SignInOffers, type SignInOffer, type SignInOfferProvider } from '../sessions/sign-in-offers.js';
import { passkeySecondFactorForm, passkeySignInForm } from './passkey.pages.js';
import { PasskeysService } from './passkeys.service.js';

/** The sign-in pages' passkey forms, with a fresh challenge each time a page is shown. */
@Injectable()
export class PasskeyOffers implements SignInOfferProvider, OnModuleInit {
  constructor(
    private readonly passkeys: PasskeysService,
    private readonly offers: SignInOffers,
  ) {}

  onModuleInit(): void {
    this.offers.accept(this);
  }

  async signIn(returnTo: string): Promise<SignInOffer> {
    const options = await this.passkeys.signInOptions();
    return (csrfToken) => passkeySignInForm({ csrfToken, returnTo, options });
  }

  async secondFactor(pending: { id: string; userId: string }): Promise<SignInOffer | null> {
    const options = await this.passkeys.secondFactorOptions(pending.userId, secondFactorBinding(pending.id));
    return options === null ? null : (csrfToken, o) => passkeySecondFactorForm({ csrfToken, options, primary: o?.primary ?? false });
  }
}

/** What a second step's challenge is bound to: that pending sign-in (or step-up). */
export function secondFactorBinding(pendingId: string): string {
  return `pending:${pendingId}`;
}
