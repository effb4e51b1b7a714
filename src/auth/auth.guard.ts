import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Metrics } from '../metrics/metrics.js';
import { RATE_LIMITED, RateLimitCharge } from '../rate-limits/rate-limited.decorator.js';
import { RateLimits } from '../rate-limits/rate-limits.service.js';
import { AuthError } from './auth.errors.js';
import { hasAnyScope, Principal } from './principal.js';
import { ACCEPTS_SESSION_CREDENTIAL, IGNORES_CREDENTIALS, IS_PUBLIC, OWN_AUTHENTICATION, REQUIRED_SCOPES } from './public.decorator.js';
import { RequestAuthenticator } from './request-authenticator.js';
import { RouteDeclarations } from './route-declarations.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by AuthGuard: who is calling, or null when anonymous. */
    principal: Principal | null;
  }
}

/**
 * The one global guard. On HTTP routes it authenticates the request (strategy chosen from the
 * headers), then denies anonymous callers unless the route is @Public() and checks @RequireScopes().
 * On GraphQL resolvers it re-checks @Public() as a second line behind the operation policy, which has
 * already answered 401/403 for the whole operation before execution.
 */
/** What the guard reads of a route's decorators. */
interface RouteDeclaration {
  isPublic: boolean;
  ownAuthentication: boolean;
  ignoresCredentials: boolean;
  acceptsSession: boolean;
  requiredScopes: string[] | undefined;
  /** Undefined when the route has no rate limit; see @RateLimited(). */
  rateLimit: RateLimitCharge | undefined;
}

@Injectable()
export class AuthGuard implements CanActivate {
  private readonly routes = new RouteDeclarations<RouteDeclaration>((targets) => ({
    isPublic: this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets) ?? false,
    ownAuthentication: this.reflector.getAllAndOverride<boolean>(OWN_AUTHENTICATION, targets) ?? false,
    ignoresCredentials: this.reflector.getAllAndOverride<boolean>(IGNORES_CREDENTIALS, targets) ?? false,
    acceptsSession: this.reflector.getAllAndOverride<boolean>(ACCEPTS_SESSION_CREDENTIAL, targets) ?? false,
    requiredScopes: this.reflector.getAllAndOverride<string[]>(REQUIRED_SCOPES, targets),
    rateLimit: this.rateLimits.enabled ? this.reflector.getAllAndOverride<RateLimitCharge>(RATE_LIMITED, targets) : undefined,
  }));

  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: RequestAuthenticator,
    private readonly metrics: Metrics,
    private readonly rateLimits: RateLimits,
  ) {}

  /** Answers without a promise whenever it can: a public route, a remembered token, no credential at all. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const route = this.routes.of(context);

    if (context.getType<string>() === 'graphql') {
      const principal = GqlExecutionContext.create(context).getContext<{ principal: Principal | null }>().principal;
      if (!principal && !route.isPublic) throw AuthError.missingCredentials();
      return true;
    }

    if (route.ownAuthentication || route.ignoresCredentials) return true;

    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (!route.rateLimit) {
      try {
        const principal = this.authenticator.authenticate(request, { session: route.acceptsSession });
        return principal instanceof Promise
          ? principal.then((p) => admit(request, route, p)).catch(this.refused)
          : admit(request, route, principal);
      } catch (err) {
        return this.refused(err);
      }
    }
    try {
      const principal = this.authenticator.authenticate(request, { session: route.acceptsSession });
      return principal instanceof Promise
        ? principal.then((p) => this.admitCharged(context, route, p)).catch((err: unknown) => this.refuseCharged(context, err))
        : this.admitCharged(context, route, principal);
    } catch (err) {
      return this.refuseCharged(context, err);
    }
  }

  /**
   * A @RateLimited() route (/api/, /graphql, /oauth/userinfo): admitted as any other; `request` routes
   * (the REST API, UserInfo) are then charged 1 point, while GraphQL is charged later by its cost.
   * Promise-free unless Redis keeps the counters.
   */
  private admitCharged(context: ExecutionContext, route: RouteDeclaration, principal: Principal | null): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    admit(request, route, principal); // a refusal is thrown here, to the caller's refuseCharged
    if (route.rateLimit !== 'request') return true;
    const charged = this.rateLimits.charge(context.switchToHttp().getResponse<FastifyReply>(), this.rateLimits.subjectOf(request), 1);
    return charged instanceof Promise ? charged.then(() => true) : true;
  }

  /**
   * On a rate-limited route, a request refused for its credentials costs its caller 1 point too (its
   * address's, unless the token was only short of a scope), so that a flood of bad tokens is limited like
   * any other traffic; once the budget is spent, the answer is 429 instead.
   */
  private refuseCharged(context: ExecutionContext, err: unknown): never | Promise<never> {
    if (!(err instanceof AuthError)) return this.refused(err);
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const charged = this.rateLimits.charge(context.switchToHttp().getResponse<FastifyReply>(), this.rateLimits.subjectOf(request), 1);
    return charged instanceof Promise ? charged.then(() => this.refused(err)) : this.refused(err);
  }

  /** Counts an API request refused for its credentials, then lets the refusal go on to be answered. */
  private readonly refused = (err: unknown): never => {
    if (err instanceof AuthError) this.metrics.apiAuthRefused(err.reason);
    throw err;
  };
}

function admit(request: FastifyRequest, route: RouteDeclaration, principal: Principal | null): boolean {
  request.principal = principal;
  if (!principal) {
    if (route.isPublic) return true;
    throw AuthError.missingCredentials();
  }
  if (route.requiredScopes && !hasAnyScope(principal, route.requiredScopes)) throw AuthError.insufficientScope(route.requiredScopes);
  return true;
}
