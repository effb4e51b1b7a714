import { Query, Resolver } from '@nestjs/graphql';
import { Public } from '../auth/public.decorator.js';
import type { GraphqlContext } from '../graphql/graphql-context.js';
import type * as G from '../graphql/graphql.schema.js';
import type { FieldResolvers, RootResolvers } from '../graphql/resolver-types.js';
import type { RateLimitState } from './rate-limit.js';

/** `Query.rateLimit`: the budget as the operation policy charged it, before any resolver ran. */
@Resolver('RateLimit')
export class RateLimitsResolver
  implements FieldResolvers<G.RateLimitResolvers, G.RateLimit, RateLimitState, never>, RootResolvers<G.QueryResolvers, 'rateLimit'>
{
  @Query('rateLimit')
  @Public()
  rateLimit(_root: unknown, _args: unknown, ctx: GraphqlContext): RateLimitState | null {
    return ctx.budget?.state ?? null;
  }
}
