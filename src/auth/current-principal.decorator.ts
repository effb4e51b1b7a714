import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { FastifyRequest } from 'fastify';
import { Principal } from './principal.js';

/** The authenticated caller (null when anonymous), on REST handlers and GraphQL resolvers alike. */
export const CurrentPrincipal = createParamDecorator((_: unknown, context: ExecutionContext): Principal | null => {
  if (context.getType<string>() === 'graphql') {
    return GqlExecutionContext.create(context).getContext<{ principal: Principal | null }>().principal;
  }
  return context.switchToHttp().getRequest<FastifyRequest>().principal ?? null;
});
