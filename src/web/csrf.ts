import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const CSRF_COOKIE = 'agora_csrf';
export const CSRF_FIELD = '_csrf';

export class CsrfError extends Error {
  constructor() {
    super('The form was not sent from this site or has expired');
    this.name = 'CsrfError';
  }
}

/**
 * The CSRF token for forms on this page (double-submit: the same random value in an HttpOnly,
 * SameSite=Strict cookie and in the form), created on first use.
 */
export function csrfToken(req: FastifyRequest, reply: FastifyReply, secure: boolean): string {
  const existing = req.cookies[CSRF_COOKIE];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomBytes(32).toString('base64url');
  void reply.setCookie(CSRF_COOKIE, token, { httpOnly: true, sameSite: 'strict', secure, path: '/' });
  req.cookies[CSRF_COOKIE] = token;
  return token;
}

/**
 * Rejects a form post whose token does not match its cookie, or that names another origin. Pages send
 * `Referrer-Policy: no-referrer`, under which browsers send `Origin: null` on form posts: that value
 * says nothing, and the token (whose cookie is SameSite=Strict, so never sent cross-site) decides.
 */
export function verifyCsrf(req: FastifyRequest, baseUrl: string): void {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== 'null' && origin !== new URL(baseUrl).origin) throw new CsrfError();
  const cookie = req.cookies[CSRF_COOKIE];
  const field = (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];
  if (typeof cookie !== 'string' || typeof field !== 'string' || cookie.length !== field.length) throw new CsrfError();
  if (!timingSafeEqual(Buffer.from(cookie), Buffer.from(field))) throw new CsrfError();
}
