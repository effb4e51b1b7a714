import { createParamDecorator, ExecutionContext, Render, SetMetadata, UseFilters } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { OwnAuthentication, Public } from '../auth/public.decorator.js';
import type { SignedInUser } from './page-sessions.js';
import { PageExceptionFilter } from './page-exception.filter.js';

export const IS_PAGES = 'agora:pages';
export const IS_ANONYMOUS_PAGE = 'agora:anonymous-page';
export const IS_CROSS_SITE_FORM = 'agora:cross-site-form';
/** The template name every page route renders through (PageRenderer's `reply.view`). */
export const PAGE_TEMPLATE = 'agora:page';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by PageGuard on page routes: the signed-in user, or null on an anonymous page. */
    signedIn: SignedInUser | null;
  }
  interface FastifyContextConfig {
    /**
     * A page route (`@Pages()`): what Fastify refuses before the handler (a body too large or of
     * another media type) is answered with an HTML error page there too.
     */
    page?: true;
  }
}

/**
 * A controller of browser pages. Every route in it requires a signed-in session unless it is marked
 * `@AnonymousPage()`, checks the CSRF token on every unsafe method (PageGuard), and returns a
 * `View` or a `Redirect` that PageRenderer turns into the response with the security headers.
 * Handlers never write the response themselves. The API guard leaves these routes to PageGuard:
 * they authenticate by session cookie, never by API token.
 */
export function Pages(): ClassDecorator {
  return (target) => {
    const decorators: ClassDecorator[] = [SetMetadata(IS_PAGES, true), Public(), OwnAuthentication(), UseFilters(PageExceptionFilter)];
    for (const decorate of decorators) decorate(target);
    for (const name of Object.getOwnPropertyNames(target.prototype)) {
      const descriptor = Object.getOwnPropertyDescriptor(target.prototype, name)!;
      if (typeof descriptor.value === 'function' && Reflect.hasMetadata(PATH_METADATA, descriptor.value)) {
        Render(PAGE_TEMPLATE)(target.prototype as object, name, descriptor);
        RouteConfig({ page: true })(target.prototype as object, name, descriptor);
      }
    }
  };
}

/** A page anyone may open, signed in or not (sign-in, sign-up, the start of an OAuth authorization). */
export const AnonymousPage = (): MethodDecorator & ClassDecorator => SetMetadata(IS_ANONYMOUS_PAGE, true);

/**
 * A form other sites post to by design, a protocol's entry point (OpenID Connect RP-initiated logout):
 * PageGuard checks no CSRF token on it, so its handler must change nothing, as for a GET; it answers a
 * page, or a redirect to the GET that decides. A cross-site post carries no SameSite=Lax cookie, so the
 * handler could not see the session anyway.
 */
export const CrossSiteForm = (): MethodDecorator => SetMetadata(IS_CROSS_SITE_FORM, true);

/**
 * A route that is both a protocol's entry point other sites post to (without these fields: no CSRF
 * check, as `@CrossSiteForm()`) and our own form (with any of these fields: CSRF-checked as every form).
 * The authorization endpoint: OpenID Connect Core §3.1.2.1 allows the request as a form post, and
 * the consent page posts its decision there, with `_csrf` and `decision`.
 */
export const CrossSiteFormUnless = (...ownFormFields: [string, ...string[]]): MethodDecorator =>
  SetMetadata(IS_CROSS_SITE_FORM, ownFormFields);

/** The signed-in user of a page that requires one. */
export const SignedIn = createParamDecorator((_: unknown, context: ExecutionContext): SignedInUser => {
  const signedIn = context.switchToHttp().getRequest<FastifyRequest>().signedIn;
  if (!signedIn) throw new Error('@SignedIn() on a page that does not require signing in: use @CurrentSession()');
  return signedIn;
});

/** The signed-in user, or null: for anonymous pages that behave differently for a signed-in visitor. */
export const CurrentSession = createParamDecorator(
  (_: unknown, context: ExecutionContext): SignedInUser | null => context.switchToHttp().getRequest<FastifyRequest>().signedIn ?? null,
);
