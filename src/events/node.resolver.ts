import { Query, Resolver, ResolveField } from '@nestjs/graphql';
import { Public } from '../auth/public.decorator.js';
import { fromGlobalId } from '../graphql/global-id.js';
import type { GraphqlContext } from '../graphql/graphql-context.js';
import type * as G from '../generated/graphql-resolvers.js';
import type { RootResolvers } from '../graphql/resolver-types.js';
import { toGqlAttendee, toGqlEvent, toGqlOrganizer, toGqlRegistration, toGqlTicketType } from './events.graphql-mappers.js';
import { EventsService } from './events.service.js';
import { GraphqlReaders } from './graphql-readers.js';
import { RegistrationsService } from './registrations.service.js';
import { TicketTypesService } from './ticket-types.service.js';

type Typed = G.ResolversTypes['Node'] & { __typename: string };

/** `node(id:)`: any object by its global ID, under the same visibility rules as everywhere else. */
@Resolver('Node')
export class NodeResolver implements RootResolvers<G.QueryResolvers, 'node'> {
  constructor(
    private readonly eventsService: EventsService,
    private readonly ticketTypes: TicketTypesService,
    private readonly registrations: RegistrationsService,
    private readonly readers: GraphqlReaders,
  ) {}

  @Query('node')
  @Public()
  async node(_root: unknown, { id }: G.QueryNodeArgs, ctx: GraphqlContext): Promise<Typed | null> {
    const decoded = fromGlobalId(id);
    if (!decoded) return null;
    const reader = this.readers.of(ctx);
    const typed = (value: G.ResolversTypes['Node'] | null, __typename: string): Typed | null => (value ? { ...value, __typename } : null);
    switch (decoded.type) {
      case 'Organizer': {
        const organizer = await reader.organizers.load(decoded.id);
        return typed(organizer && toGqlOrganizer(organizer), 'Organizer');
      }
      case 'Event': {
        const event = await this.eventsService.findVisible(reader, decoded.id);
        return typed(event && toGqlEvent(event), 'Event');
      }
      case 'TicketType': {
        const ticketType = await this.ticketTypes.findVisible(reader, decoded.id);
        return typed(ticketType && toGqlTicketType(ticketType), 'TicketType');
      }
      case 'Registration': {
        const registration = await this.registrations.findVisible(reader, decoded.id);
        return typed(registration && toGqlRegistration(registration), 'Registration');
      }
      case 'Attendee': {
        const attendee = await this.registrations.findVisibleAttendee(reader, decoded.id);
        return typed(attendee && toGqlAttendee(attendee), 'Attendee');
      }
    }
  }

  @ResolveField('__resolveType')
  resolveType(value: Typed): string {
    return value.__typename;
  }
}
