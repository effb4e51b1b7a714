import { Query, Resolver } from '@nestjs/graphql';
import { Public } from '../auth/public.decorator.js';
import type { GraphqlContext } from './graphql-context.js';
import type * as G from '../generated/graphql-resolvers.js';
import type { RootResolvers } from './resolver-types.js';

/** `Query.rateLimit`: the budget as the operation policy charged it, before any resolver ran. */
@Resolver('RateLimit')
export class RateLimitsResolver implements RootResolvers<G.QueryResolvers, 'rateLimit'> {
  @Query('rateLimit')
  @Public()
  rateLimit(_root: unknown, _args: unknown, ctx: GraphqlContext): G.RateLimit | null {
    const state = ctx.budget?.state;
    if (!state) return null;
    return {
      ...state,
      resetAt: new Date(state.resetAt),
      budget: ctx.budget!.subject.budget === 'address' ? 'ADDRESS' : 'USER',
    };
  }
}
