import { Injectable } from '@nestjs/common';
import { isSelfRegistered } from '../clients/application.model.js';
import { GrantsService } from '../consent/grants.service.js';

type Client = { ownerId: string | null };

/**
 * Whether a page about this application (consent, device consent, sign-out confirmation, a way back)
 * carries the "not verified by Agora" notice: it registered itself, and nobody at Agora answers for
 * its name or where it sends the user.
 */
export function showsUnverifiedNotice(application: Client | null): boolean {
  return application !== null && isSelfRegistered(application);
}

/** The host a person recognises, or for a native app's private-use scheme the scheme itself. */
export function destinationOf(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.host || url.protocol;
}

/** The way back to the client, shown as a link: where it leads, and the address itself. */
export interface LinkToClient {
  destination: string;
  location: string;
}

/**
 * The browser sent back to an address the client registered, when the user did not choose to go (an
 * error answer, prompt=none, a sign-out without confirmation): a redirect, except to a self-registered
 * application, whose registrant chose the address and could otherwise send anyone anywhere through this
 * server (an open redirector, RFC 9700 §4.11.2). That one gets a page with the link, under where it leads.
 */
export function backToClient(
  application: Client | null,
  registeredUri: string,
  location: string,
): { redirect: string } | { link: LinkToClient } {
  if (!showsUnverifiedNotice(application)) return { redirect: location };
  return { link: { destination: destinationOf(registeredUri), location } };
}

/**
 * When the user is asked, and when an earlier answer stands: the interaction rules that the
 * authorization, device and logout pages share (with showsUnverifiedNotice and backToClient above).
 */
@Injectable()
export class InteractionRules {
  constructor(private readonly grants: GrantsService) {}

  /**
   * Whether the user's earlier approval answers this authorization request without the consent page: it
   * covers the scopes and every resource server the request names.
   * prompt=consent asks again even when an earlier approval covers the scopes; so does a request of a
   * native app (RFC 8252 §8.6): any program on the device can use its loopback or private-use redirect
   * URI with a PKCE pair of its own, so only the user can tell the real app from another. A device
   * authorization is always shown (RFC 8628 §5.4: the user confirms the code), never remembered.
   */
  async consentRemembered(
    request: {
      application: { id: string; clientType: string; firstConsentedAt: Date | null };
      redirectUri: string;
      scopes: string[];
      resourceServers: readonly { id: string }[];
      prompt: ReadonlySet<string>;
    },
    userId: string,
  ): Promise<boolean> {
    if (request.prompt.has('consent') || asksEveryTime(request)) return false;
    if (!(await this.grants.covers(userId, request.application.id, request.scopes, request.resourceServers))) return false;
    await this.grants.approvedByGrant(request.application);
    return true;
  }

  /** The user approved on the consent page: remembered for the next request (GrantsService.remember). */
  rememberConsent(
    userId: string,
    request: {
      application: { id: string };
      scopes: string[];
      resourceServers: readonly { id: string; name: string; identifier: string }[];
    },
  ): Promise<void> {
    return this.grants.remember(userId, request.application.id, request.scopes, request.resourceServers);
  }

  /** A sign-out asks the user to confirm, unless a valid id_token_hint names the user signed in in this browser. */
  asksToConfirmSignOut(hint: { sub: string } | null, userId: string): boolean {
    return hint?.sub !== userId;
  }
}

/** A public client whose redirect URI is not https (loopback or a private-use scheme): a native app. */
function asksEveryTime(request: { application: { clientType: string }; redirectUri: string }): boolean {
  return request.application.clientType === 'public' && !request.redirectUri.startsWith('https://');
}
