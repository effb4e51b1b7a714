import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { SessionsService } from '../sessions/sessions.service.js';
import type { WebCookies } from './cookies.js';
import { RouteDeclarations } from '../auth/route-declarations.js';
import { CsrfTokens } from './csrf.js';
import { IS_ANONYMOUS_PAGE, IS_CROSS_SITE_FORM, IS_PAGES } from './pages.decorator.js';
import { SignInRequired } from './sign-in-required.js';
import { WEB_COOKIES } from './web.tokens.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

interface PageRoute {
  isPage: boolean;
  anonymous: boolean;
  crossSiteForm: boolean;
}

/**
 * The pages' default-deny, beside the API's AuthGuard: on every route of a `@Pages()` controller it
 * resolves the session cookie, requires a signed-in user unless the route is `@AnonymousPage()`, and
 * verifies the CSRF token on every unsafe method. The one declaration that skips the CSRF check is
 * `@CrossSiteForm()`, on a handler that changes nothing (listed as such in the route inventory).
 */
@Injectable()
export class PageGuard implements CanActivate {
  private readonly routes = new RouteDeclarations<PageRoute>((targets) => ({
    isPage: this.reflector.getAllAndOverride<boolean>(IS_PAGES, targets) ?? false,
    anonymous: this.reflector.getAllAndOverride<boolean>(IS_ANONYMOUS_PAGE, targets) ?? false,
    crossSiteForm: this.reflector.getAllAndOverride<boolean>(IS_CROSS_SITE_FORM, targets) ?? false,
  }));

  constructor(
    private readonly reflector: Reflector,
    private readonly sessions: SessionsService,
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
    if (!SAFE_METHODS.has(req.method) && !route.crossSiteForm) {
      this.csrf.verify(req, req.signedIn ? { sessionId: req.signedIn.sessionId } : null, CsrfTokens.formToken(req));
    }
    return true;
  }
}
