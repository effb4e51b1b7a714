import { Args, Context, Mutation, ResolveField, Resolver } from '@nestjs/graphql';
import { Clock } from '../clock/clock.js';
import type { GraphqlContext } from '../graphql/graphql-context.js';
import type * as G from '../graphql/graphql.schema.js';
import { MODEL, requireId, toGqlEvent, toGqlTicketType, toPayload } from './events.graphql-mappers.js';
import type { GqlTicketType } from './events.graphql-mappers.js';
import { GraphqlReaders } from './graphql-readers.js';
import { TicketTypeChanges, TicketTypesService } from './ticket-types.service.js';

@Resolver('TicketType')
export class TicketTypesResolver {
  constructor(
    private readonly ticketTypes: TicketTypesService,
    private readonly readers: GraphqlReaders,
    private readonly clock: Clock,
  ) {}

  @ResolveField('event')
  async event(ticketType: GqlTicketType, _args: unknown, ctx: GraphqlContext) {
    return toGqlEvent((await this.readers.of(ctx).events.load(ticketType[MODEL].eventId))!);
  }

  @ResolveField('onSale')
  onSale(ticketType: GqlTicketType): boolean {
    const now = this.clock.now().getTime();
    const { salesStartAt, salesEndAt, quantity, sold } = ticketType[MODEL];
    return (
      (!salesStartAt || salesStartAt.getTime() <= now) &&
      (!salesEndAt || now < salesEndAt.getTime()) &&
      (quantity === null || sold < quantity)
    );
  }

  @Mutation('createTicketType')
  create(@Args('input') input: G.CreateTicketTypeInput, @Context() ctx: GraphqlContext) {
    return toPayload('ticketType', async () => {
      const eventId = requireId(input.eventId, 'Event', 'eventId');
      return toGqlTicketType(await this.ticketTypes.create(this.readers.of(ctx), eventId, { ...input, ...salesWindow(input) }));
    });
  }

  @Mutation('updateTicketType')
  update(@Args('input') input: G.UpdateTicketTypeInput, @Context() ctx: GraphqlContext) {
    return toPayload('ticketType', async () => {
      const id = requireId(input.ticketTypeId, 'TicketType', 'ticketTypeId');
      const changes: TicketTypeChanges = { ...input, ...salesWindow(input) };
      return toGqlTicketType(await this.ticketTypes.update(this.readers.of(ctx), id, changes));
    });
  }

  @Mutation('deleteTicketType')
  delete(@Args('input') input: G.DeleteTicketTypeInput, @Context() ctx: GraphqlContext) {
    return toPayload('deletedTicketTypeId', async () => {
      await this.ticketTypes.delete(this.readers.of(ctx), requireId(input.ticketTypeId, 'TicketType', 'ticketTypeId'));
      return input.ticketTypeId;
    });
  }
}

/** DateTime inputs as dates; an explicit null clears a bound, an omitted one leaves it. */
function salesWindow(input: { salesStartAt?: G.DateTime | null; salesEndAt?: G.DateTime | null }) {
  const date = (v: G.DateTime | null | undefined) => (v === undefined ? undefined : v === null ? null : new Date(v));
  return { salesStartAt: date(input.salesStartAt), salesEndAt: date(input.salesEndAt) };
}
