import { personOf } from '../auth/principal.js';
import { Mutation, Query, Resolver } from '@nestjs/graphql';
import { Public } from '../auth/public.decorator.js';
import type { GraphqlContext } from '../graphql/graphql-context.js';
import type * as G from '../generated/graphql-resolvers.js';
import { toPayload } from '../graphql/payload.js';
import type { FieldResolvers, RootResolvers } from '../graphql/resolver-types.js';
import type { UserProfile } from './user.model.js';
import { UsersService } from './users.service.js';

/** `User` objects are the users' domain model (`User`), whose fields the schema shows as they are. */
@Resolver('User')
export class UsersResolver
  implements
    FieldResolvers<G.UserResolvers, G.User, UserProfile, 'registrations' | 'organizerMemberships'>,
    RootResolvers<G.QueryResolvers, 'viewer' | 'user'>,
    RootResolvers<G.MutationResolvers, 'updateViewerProfile'>
{
  // Resolved by the events feature, which owns registrations and organizers (ViewerListsResolver).
  declare registrations: NonNullable<G.UserResolvers['registrations']>;
  declare organizerMemberships: NonNullable<G.UserResolvers['organizerMemberships']>;

  constructor(private readonly users: UsersService) {}

  @Query('viewer')
  viewer(_root: unknown, _args: unknown, ctx: GraphqlContext): UserProfile {
    return personOf(ctx.principal!);
  }

  @Query('user')
  @Public()
  user(_root: unknown, { username }: G.QueryUserArgs): Promise<UserProfile | null> {
    return this.users.findActiveByUsername(username);
  }

  @Mutation('updateViewerProfile')
  updateViewerProfile(
    _root: unknown,
    { input }: G.MutationUpdateViewerProfileArgs,
    ctx: GraphqlContext,
  ): Promise<G.ResolversTypes['UpdateViewerProfilePayload']> {
    return toPayload('user', () => this.users.updateProfile(personOf(ctx.principal!).id, input));
  }
}
