import type { CookieSerializeOptions } from '@fastify/cookie';

/**
 * The browser cookies of the pages. Under https they carry the `__Host-` prefix, which browsers accept
 * only with Secure, Path=/ and no Domain: another host (a sibling subdomain, a plain-http network
 * attacker) cannot plant or overwrite them. Plain http (local development) cannot use the prefix.
 */
export class WebCookies {
  readonly session: string;
  readonly csrf: string;
  readonly flash: string;
  /** A browser's own random id, kept for a long time: tells a sign-in from a browser the account used before (KnownBrowsers). */
  readonly device: string;
  /** A sign-in waiting for its second step (src/sessions/sign-in-steps.ts). */
  readonly pendingSignIn: string;

  constructor(readonly secure: boolean) {
    const prefix = secure ? '__Host-' : '';
    this.session = `${prefix}agora_session`;
    this.csrf = `${prefix}agora_csrf`;
    this.flash = `${prefix}agora_flash`;
    this.device = `${prefix}agora_device`;
    this.pendingSignIn = `${prefix}agora_pending_sign_in`;
  }

  /** HttpOnly, Path=/, Secure under https; SameSite as given. */
  options(sameSite: 'lax' | 'strict', extra: Partial<CookieSerializeOptions> = {}): CookieSerializeOptions {
    return { httpOnly: true, secure: this.secure, sameSite, path: '/', ...extra };
  }
}
