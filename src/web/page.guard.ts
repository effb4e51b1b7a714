import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import type { WebCookies } from './cookies.js';
import { RouteDeclarations } from '../auth/route-declarations.js';
import { CsrfTokens } from './csrf.js';
import { IS_ANONYMOUS_PAGE, IS_CROSS_SITE_FORM, IS_PAGES } from './pages.decorator.js';
import { PageSessions } from './page-sessions.js';
import { SignInRequired } from './sign-in-required.js';
import { WEB_COOKIES } from './web.tokens.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

interface PageRoute {
  isPage: boolean;
  anonymous: boolean;
  /** true: never CSRF-checked; a list of fields: checked when the form carries any of them (`@CrossSiteFormUnless`). */
  crossSiteForm: boolean | readonly string[];
}

/**
 * The pages' default-deny, beside the API's AuthGuard: on every route of a `@Pages()` controller it
 * resolves the session cookie, requires a signed-in user unless the route is `@AnonymousPage()`, and
 * verifies the CSRF token on every unsafe method. The one declaration that skips the CSRF check is
 * `@CrossSiteForm()`, on a handler that changes nothing (listed as such in the route inventory), and
 * `@CrossSiteFormUnless(fields)`, which skips it only for a form that carries none of those fields.
 */
@Injectable()
export class PageGuard implements CanActivate {
  private readonly routes = new RouteDeclarations<PageRoute>((targets) => ({
    isPage: this.reflector.getAllAndOverride<boolean>(IS_PAGES, targets) ?? false,
    anonymous: this.reflector.getAllAndOverride<boolean>(IS_ANONYMOUS_PAGE, targets) ?? false,
    crossSiteForm: this.reflector.getAllAndOverride<boolean | readonly string[]>(IS_CROSS_SITE_FORM, targets) ?? false,
  }));

  constructor(
    private readonly reflector: Reflector,
    private readonly sessions: PageSessions,
    private readonly csrf: CsrfTokens,
    @Inject(WEB_COOKIES) private readonly cookies: WebCookies,
  ) {}

  /** Answers API routes without a promise. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType<string>() !== 'http') return true;
    const route = this.routes.of(context);
    if (!route.isPage) return true;
    return this.admitPage(context, route);
  }

  private async admitPage(context: ExecutionContext, route: PageRoute): Promise<boolean> {
    const req = context.switchToHttp().getRequest<FastifyRequest>();
    req.signedIn = await this.sessions.resolve(req.cookies[this.cookies.session]);
    if (!req.signedIn && !route.anonymous) throw new SignInRequired(req.method === 'GET' ? req.url : undefined);
    if (!SAFE_METHODS.has(req.method) && needsCsrfCheck(route, req.body)) {
      this.csrf.verify(req, req.signedIn ? { sessionId: req.signedIn.sessionId } : null, CsrfTokens.formToken(req));
    }
    return true;
  }
}

function needsCsrfCheck(route: PageRoute, body: unknown): boolean {
  if (route.crossSiteForm === true) return false;
  if (route.crossSiteForm === false) return true;
  if (!body || typeof body !== 'object') return false;
  return route.crossSiteForm.some((field) => Object.hasOwn(body, field));
}
