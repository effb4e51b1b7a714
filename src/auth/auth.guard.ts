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
    const refused = route.rateLimit ? this.chargedRefusal(request, context.switchToHttp().getResponse<FastifyReply>()) : this.refused;
    const admitted =
      route.rateLimit === 'request'
        ? (principal: Principal | null) => this.charged(request, context.switchToHttp().getResponse<FastifyReply>(), route, principal)
        : (principal: Principal | null) => admit(request, route, principal);
    try {
      const principal = this.authenticator.authenticate(request, { session: route.acceptsSession });
      return principal instanceof Promise ? principal.then(admitted).catch(refused) : admitted(principal);
    } catch (err) {
      return refused(err);
    }
  }

  /**
   * @RateLimited('request') routes (the REST API): admitted as any other, then charged 1 point.
   * GraphQL (`operation`) is charged later, by its cost, and keeps the promise-free path.
   */
  private charged(request: FastifyRequest, reply: FastifyReply, route: RouteDeclaration, principal: Principal | null): Promise<boolean> {
    admit(request, route, principal); // a refusal is thrown here, to the caller's charged refusal
    return this.rateLimits.charge(reply, this.rateLimits.subjectOf(request), 1).then(() => true);
  }

  /**
   * On a rate-limited route, a request refused for its credentials costs its caller 1 point too (its
   * address's, unless the token was only short of a scope), so that a flood of bad tokens is limited like
   * any other traffic; once the budget is spent, the answer is 429 instead.
   */
  private chargedRefusal(request: FastifyRequest, reply: FastifyReply): (err: unknown) => Promise<never> {
    return async (err) => {
      if (err instanceof AuthError) await this.rateLimits.charge(reply, this.rateLimits.subjectOf(request), 1);
      return this.refused(err);
    };
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
