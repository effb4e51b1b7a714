import { Inject, Injectable } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import type { SignedInUser } from './page-sessions.js';
import type { WebCookies } from './cookies.js';
import { CsrfTokens } from './csrf.js';
import { Flash, FLASH_TTL_SECONDS, FlashSealer } from './flash.js';
import { Redirect, View } from './page-result.js';
import { sendHtml } from './security-headers.js';
import { WEB_COOKIES } from './web.tokens.js';

/**
 * The one place page results become responses: a `View` is rendered with the page context (CSRF
 * token, signed-in user, flash) and sent with the security headers; a `Redirect` sets its cookies and
 * flash and redirects. Page routes reach it through Nest's `@Render` (`reply.view`), which `@Pages()`
 * puts on every handler; anything else a page handler returns is an error, never sent.
 */
@Injectable()
export class PageRenderer {
  private readonly flashes: FlashSealer;

  constructor(
    private readonly csrf: CsrfTokens,
    private readonly clock: Clock,
    @Inject(WEB_COOKIES) private readonly cookies: WebCookies,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    if (!config.secretKey) throw new Error('SECRET_KEY is not resolved: the page flash needs it');
    this.flashes = new FlashSealer(config.secretKey);
  }

  attach(fastify: FastifyInstance): void {
    const send = (reply: FastifyReply, result: unknown) => this.send(reply, result);
    fastify.decorateReply('view', function (this: FastifyReply, _template: string, result: unknown) {
      return send(this, result);
    });
  }

  send(reply: FastifyReply, result: unknown): FastifyReply {
    const req = reply.request;
    const signedIn = req.signedIn ?? null;
    if (result instanceof Redirect) return this.redirect(reply, result, signedIn);
    if (!(result instanceof View)) {
      throw new TypeError(`Page handler of ${req.routeOptions.url ?? req.url} returned ${typeof result}, not a View or a Redirect`);
    }
    const flash = this.takeFlash(req, reply, signedIn);
    const csrfToken = this.csrf.tokenFor(req, reply, signedIn ? { sessionId: signedIn.sessionId } : null);
    for (const [name, value] of Object.entries(result.options.headers ?? {})) void reply.header(name, value);
    return sendHtml(reply, result.render({ signedIn, csrfToken, flash }), result.options);
  }

  private redirect(reply: FastifyReply, result: Redirect, signedIn: SignedInUser | null): FastifyReply {
    for (const cookie of result.effects.cookies ?? []) {
      if (cookie.value === null) void reply.clearCookie(cookie.name, cookie.options);
      else void reply.setCookie(cookie.name, cookie.value, cookie.options);
    }
    if (result.effects.flash) {
      const sealed = this.flashes.seal(result.effects.flash, signedIn?.sessionId ?? null, this.clock.now().getTime());
      void reply.setCookie(this.cookies.flash, sealed, this.cookies.options('strict', { maxAge: FLASH_TTL_SECONDS }));
    }
    return reply.header('cache-control', 'no-store').redirect(result.location, result.status);
  }

  /** The flash meant for this page, cleared as it is shown; one meant for another page is left for it. */
  private takeFlash(req: FastifyRequest, reply: FastifyReply, signedIn: SignedInUser | null): Flash | null {
    const value = req.cookies[this.cookies.flash];
    if (!value) return null;
    const flash = this.flashes.open(value, signedIn?.sessionId ?? null, this.clock.now().getTime());
    const path = req.url.split('?')[0];
    if (flash && flash.path !== path) return null;
    void reply.clearCookie(this.cookies.flash, this.cookies.options('strict'));
    return flash;
  }
}
