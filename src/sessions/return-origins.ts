import { Injectable } from '@nestjs/common';

/** Where a return address leads, as the sign-in page tells the user and its CSP must allow. */
export interface ReturnDestination {
  /** The origin of the client the way back may end at (form-action), for a valid authorization request. */
  origin?: string;
  /** The application the user signs in to continue to ("Sign in to continue to …"). */
  application?: { name: string; /** It registered itself: nobody at Agora answers for its name. */ unverified: boolean };
  /** Signing in to approve a device (the device flow's page), whose application is not known yet. */
  device?: boolean;
}

/** What tells where a return address leads: the OAuth authorize pipeline (src/oauth/). */
export interface ReturnOriginSource {
  destinationOf(returnTo: string): Promise<ReturnDestination>;
}

/**
 * Where the sign-in and sign-up forms lead back to: the client of an OAuth authorization request they
 * return to, whose origin the page's form-action must allow (a returning user whose approval covers the
 * request goes straight back to the client, and Chromium applies the page's form-action to that
 * redirect), and whose name the page shows. The OAuth module registers its validator here when it starts
 * (it depends on this module, not the other way round).
 */
@Injectable()
export class ReturnOrigins {
  private source: ReturnOriginSource | null = null;

  accept(source: ReturnOriginSource): void {
    this.source = source;
  }

  async of(returnTo: string): Promise<string[]> {
    const { origin } = await this.destinationOf(returnTo);
    return origin ? [origin] : [];
  }

  async destinationOf(returnTo: string): Promise<ReturnDestination> {
    return (await this.source?.destinationOf(returnTo)) ?? {};
  }
}
