import { Mutation, ResolveField, Resolver } from '@nestjs/graphql';
import type { GraphqlContext } from '../graphql/graphql-context.js';
import type * as G from '../generated/graphql-resolvers.js';
import type { FieldResolvers, RootResolvers } from '../graphql/resolver-types.js';
import { toPayload } from '../graphql/payload.js';
import { requireId, toGqlEvent, toGqlTicketType } from './events.graphql-mappers.js';
import { MODEL } from './events.graphql-parents.js';
import type { GqlEvent, GqlTicketType } from './events.graphql-parents.js';
import { GraphqlReaders } from './graphql-readers.js';
import { TicketTypeChanges, TicketTypesService } from './ticket-types.service.js';

@Resolver('TicketType')
export class TicketTypesResolver
  implements
    FieldResolvers<G.TicketTypeResolvers, G.TicketType, GqlTicketType, 'event' | 'onSale'>,
    RootResolvers<G.MutationResolvers, 'createTicketType' | 'updateTicketType' | 'deleteTicketType'>
{
  constructor(
    private readonly ticketTypesService: TicketTypesService,
    private readonly readers: GraphqlReaders,
  ) {}

  @ResolveField('event')
  async event(ticketType: GqlTicketType, _args: unknown, ctx: GraphqlContext): Promise<GqlEvent> {
    return toGqlEvent((await this.readers.of(ctx).events.load(ticketType[MODEL].eventId))!);
  }

  @ResolveField('onSale')
  onSale(ticketType: GqlTicketType): boolean {
    return this.ticketTypesService.isOnSale(ticketType[MODEL]);
  }

  @Mutation('createTicketType')
  createTicketType(_root: unknown, { input }: G.MutationCreateTicketTypeArgs, ctx: GraphqlContext) {
    return toPayload('ticketType', async () => {
      const eventId = requireId(input.eventId, 'Event', 'eventId');
      return toGqlTicketType(await this.ticketTypesService.create(this.readers.of(ctx), eventId, input));
    });
  }

  @Mutation('updateTicketType')
  updateTicketType(_root: unknown, { input }: G.MutationUpdateTicketTypeArgs, ctx: GraphqlContext) {
    return toPayload('ticketType', async () => {
      const id = requireId(input.ticketTypeId, 'TicketType', 'ticketTypeId');
      // An explicit null clears a sales bound; an omitted one (undefined) leaves it.
      const changes: TicketTypeChanges = input;
      return toGqlTicketType(await this.ticketTypesService.update(this.readers.of(ctx), id, changes));
    });
  }

  @Mutation('deleteTicketType')
  deleteTicketType(_root: unknown, { input }: G.MutationDeleteTicketTypeArgs, ctx: GraphqlContext) {
    return toPayload('deletedTicketTypeId', async () => {
      await this.ticketTypesService.delete(this.readers.of(ctx), requireId(input.ticketTypeId, 'TicketType', 'ticketTypeId'));
      return input.ticketTypeId;
    });
  }
}
