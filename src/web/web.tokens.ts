/** Injection token of the WebCookies (cookie names and flags for this deployment). */
export const WEB_COOKIES = Symbol('WEB_COOKIES');
