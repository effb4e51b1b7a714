import type { CookieSerializeOptions } from '@fastify/cookie';
import type { SignedInUser } from './page-sessions.js';
import type { Flash } from './flash.js';
import type { CspAdditions } from './security-headers.js';

/** What a page template gets besides its own data. */
export interface PageContext {
  /** The signed-in user, or null on an anonymous page. */
  signedIn: SignedInUser | null;
  /** The CSRF token for this page's forms (bound to the session). */
  csrfToken: string;
  /** A one-time message left by the form that redirected here, if it was meant for this page. */
  flash: Flash | null;
}

export interface ViewOptions {
  status?: number;
  /** Origins that forms on this page may end up at (form-action also governs the redirects after a submission). */
  formActions?: string[];
  /** Sources this page adds to the Content-Security-Policy; each needs a comment saying why. */
  csp?: CspAdditions;
  headers?: Record<string, string>;
}

/** An HTML page: rendered, with the security headers, by PageRenderer. */
export class View {
  constructor(
    readonly render: (context: PageContext) => string,
    readonly options: ViewOptions = {},
  ) {}
}

/** A cookie the response sets (a value) or clears (null). */
export interface CookieChange {
  name: string;
  value: string | null;
  options: CookieSerializeOptions;
}

/** A redirect, optionally leaving a one-time flash for the page it leads to, or changing cookies (the session). */
export class Redirect {
  constructor(
    readonly location: string,
    readonly status: 302 | 303 = 303,
    readonly effects: { flash?: Flash; cookies?: CookieChange[] } = {},
  ) {}
}

export type PageResult = View | Redirect;

export const view = (render: (context: PageContext) => string, options?: ViewOptions): View => new View(render, options);

/** 303 See Other to a page of this site, with an optional flash for it (post/redirect/get). */
export const seeOther = (location: string, flash?: Flash): Redirect => new Redirect(location, 303, { flash });
