import { Mutation, ResolveField, Resolver } from '@nestjs/graphql';
import type * as G from '../generated/graphql-resolvers.js';
import type { GraphqlContext } from '../graphql/graphql-context.js';
import { toPayload } from '../graphql/payload.js';
import type { RootResolvers } from '../graphql/resolver-types.js';
import { requireId } from './events.graphql-mappers.js';
import { MODEL, type GqlOrganizer } from './events.graphql-parents.js';
import { GraphqlReaders } from './graphql-readers.js';
import { ServiceAccount, ServiceAccountsService } from './service-accounts.service.js';

function toGqlServiceAccount(account: ServiceAccount): G.ServiceAccount {
  return { clientId: account.clientId, name: account.name, scopes: account.scopes, createdAt: account.createdAt };
}

/** An organizer's service accounts: `Organizer.serviceAccounts`, `createServiceAccount`, `deleteServiceAccount`. */
@Resolver('Organizer')
export class ServiceAccountsResolver implements RootResolvers<G.MutationResolvers, 'createServiceAccount' | 'deleteServiceAccount'> {
  constructor(
    private readonly serviceAccounts: ServiceAccountsService,
    private readonly readers: GraphqlReaders,
  ) {}

  @ResolveField('serviceAccounts')
  async list(organizer: GqlOrganizer, _args: unknown, ctx: GraphqlContext): Promise<G.ServiceAccount[]> {
    return (await this.serviceAccounts.list(this.readers.of(ctx), organizer[MODEL].id)).map(toGqlServiceAccount);
  }

  @Mutation('createServiceAccount')
  async createServiceAccount(_root: unknown, { input }: G.MutationCreateServiceAccountArgs, ctx: GraphqlContext) {
    const organizerId = requireId(input.organizerId, 'Organizer', 'organizerId');
    let clientSecret: string | null = null;
    const payload = await toPayload('serviceAccount', async () => {
      const created = await this.serviceAccounts.create(this.readers.of(ctx), organizerId, input);
      clientSecret = created.clientSecret ?? null;
      return toGqlServiceAccount(created.application);
    });
    return { ...payload, clientSecret };
  }

  @Mutation('deleteServiceAccount')
  deleteServiceAccount(_root: unknown, { input }: G.MutationDeleteServiceAccountArgs, ctx: GraphqlContext) {
    return toPayload('deletedClientId', async () => {
      const reader = this.readers.of(ctx);
      const account = await this.serviceAccounts.getByClientId(reader, input.clientId);
      return (await this.serviceAccounts.delete(reader, account.id)).clientId;
    });
  }
}
