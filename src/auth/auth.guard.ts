import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { FastifyRequest } from 'fastify';
import { AuthError } from './auth.errors.js';
import { hasAnyScope, Principal } from './principal.js';
import { ACCEPTS_SESSION_CREDENTIAL, IGNORES_CREDENTIALS, IS_PUBLIC, OWN_AUTHENTICATION, REQUIRED_SCOPES } from './public.decorator.js';
import { RequestAuthenticator } from './request-authenticator.js';

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
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: RequestAuthenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets) ?? false;

    if (context.getType<string>() === 'graphql') {
      const principal = GqlExecutionContext.create(context).getContext<{ principal: Principal | null }>().principal;
      if (!principal && !isPublic) throw AuthError.missingCredentials();
      return true;
    }

    if (this.reflector.getAllAndOverride<boolean>(OWN_AUTHENTICATION, targets)) return true;
    if (this.reflector.getAllAndOverride<boolean>(IGNORES_CREDENTIALS, targets)) return true;

    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const session = this.reflector.getAllAndOverride<boolean>(ACCEPTS_SESSION_CREDENTIAL, targets) ?? false;
    const principal = await this.authenticator.authenticate(request, { session });
    request.principal = principal;
    if (!principal) {
      if (isPublic) return true;
      throw AuthError.missingCredentials();
    }
    const required = this.reflector.getAllAndOverride<string[]>(REQUIRED_SCOPES, targets);
    if (required && !hasAnyScope(principal, required)) throw AuthError.insufficientScope(required);
    return true;
  }
}
