import { Tokens } from '@fastify/csrf';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hkdfSync } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { WEB_COOKIES } from './web.tokens.js';
import type { WebCookies } from './cookies.js';

export const CSRF_FIELD = '_csrf';
/** The header same-origin scripts (the API explorer) send the token in. */
export const CSRF_HEADER = 'x-csrf-token';

export class CsrfError extends Error {
  constructor(reason: string) {
    super(`CSRF check failed: ${reason}`);
    this.name = 'CsrfError';
  }
}

/** What a token is bound to: the browser's sign-in session, or no session yet. */
export type CsrfBinding = { sessionId: string } | null;

const SECRET = /^[A-Za-z0-9_-]{24}$/;

/**
 * CSRF protection for pages and the explorer's API calls, with @fastify/csrf's tokens: a random secret
 * in an HttpOnly, SameSite=Lax cookie, and per-form tokens derived from it and HMAC-bound (key from
 * SECRET_KEY) to the sign-in session. A token from another session, a forged or replayed pair of
 * cookie and field, and a request another origin sent (`Origin` other than ours, `Origin: null`,
 * `Sec-Fetch-Site` other than same-origin) are refused.
 */
@Injectable()
export class CsrfTokens {
  private readonly tokens;
  private readonly origin: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(WEB_COOKIES) private readonly cookies: WebCookies,
  ) {
    if (!config.secretKey) throw new Error('SECRET_KEY is not resolved: CSRF tokens need it');
    const hmacKey = Buffer.from(hkdfSync('sha256', config.secretKey, 'agora', 'csrf-tokens', 32));
    this.tokens = new Tokens({ userInfo: true, hmacKey });
    this.origin = new URL(config.baseUrl).origin;
  }

  /** A token for the forms of the page being rendered; sets the secret cookie on first use. */
  tokenFor(req: FastifyRequest, reply: FastifyReply, binding: CsrfBinding): string {
    let secret = req.cookies[this.cookies.csrf] ?? '';
    if (!SECRET.test(secret)) {
      secret = this.tokens.secretSync();
      req.cookies[this.cookies.csrf] = secret;
      // Lax, not Strict: a Strict cookie is not sent when the visitor arrives from another site (an OAuth
      // client, a link in an e-mail), and a new secret would then break the forms open in other tabs.
      // The token's binding to the session and the Origin check carry the protection.
      void reply.setCookie(this.cookies.csrf, secret, this.cookies.options('lax'));
    }
    return this.tokens.create(secret, userInfo(binding));
  }

  /** Throws CsrfError unless the request came from one of our pages, for this session. */
  verify(req: FastifyRequest, binding: CsrfBinding, token: unknown): void {
    this.verifyOrigin(req);
    const secret = req.cookies[this.cookies.csrf];
    if (!secret || !SECRET.test(secret)) throw new CsrfError('no CSRF cookie');
    if (typeof token !== 'string' || token.length > 200) throw new CsrfError('no CSRF token');
    if (!this.tokens.verify(secret, token, userInfo(binding))) throw new CsrfError('CSRF token does not match');
  }

  /** The token a posted form carries. */
  static formToken(req: FastifyRequest): unknown {
    return (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];
  }

  private verifyOrigin(req: FastifyRequest): void {
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (origin !== this.origin) throw new CsrfError(`cross-origin request from ${origin}`);
      return;
    }
    // Browsers that leave Origin out still say where a request came from; clients that are not
    // browsers send neither, and are held to the token alone.
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin') throw new CsrfError(`request from a ${String(site)} page`);
  }
}

function userInfo(binding: CsrfBinding): string {
  return binding ? `session:${binding.sessionId}` : 'anonymous';
}
