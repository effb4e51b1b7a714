import { Args, Mutation, Query, Resolver } from '@nestjs/graphql';
import { CurrentPrincipal } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import { Public } from '../auth/public.decorator.js';
import { DomainError } from '../errors/domain-error.js';
import type { UpdateViewerProfileInput, UpdateViewerProfilePayload, User } from '../graphql/graphql.schema.js';
import { User as UserModel } from './user.model.js';
import { UsersService } from './users.service.js';

const toGraphql = (user: Pick<UserModel, 'id' | 'username' | 'name'>): User => ({ id: user.id, username: user.username, name: user.name });

@Resolver('User')
export class UsersResolver {
  constructor(private readonly users: UsersService) {}

  @Query('viewer')
  viewer(@CurrentPrincipal() principal: Principal): User {
    return toGraphql(principal.user);
  }

  @Query('user')
  @Public()
  async user(@Args('username') username: string): Promise<User | null> {
    const user = await this.users.findActiveByUsername(username);
    return user ? toGraphql(user) : null;
  }

  @Mutation('updateViewerProfile')
  async updateViewerProfile(
    @CurrentPrincipal() principal: Principal,
    @Args('input') input: UpdateViewerProfileInput,
  ): Promise<UpdateViewerProfilePayload> {
    try {
      return { user: toGraphql(await this.users.updateProfile(principal.user.id, input)), userErrors: [] };
    } catch (err) {
      if (!(err instanceof DomainError) || err.kind !== 'invalid') throw err;
      return { user: null, userErrors: [{ field: err.field ? ['input', err.field] : null, message: err.message, code: err.code }] };
    }
  }
}
