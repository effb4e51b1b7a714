import { Mutation, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { GraphQLError } from 'graphql';
import { Public } from '../auth/public.decorator.js';
import { toConnection, toPageRequest } from '../graphql/connection.js';
import { idOfType } from '../graphql/global-id.js';
import type { GraphqlContext } from '../graphql/graphql-context.js';
import type * as G from '../generated/graphql-resolvers.js';
import type { FieldResolvers, RootResolvers } from '../graphql/resolver-types.js';
import { toPayload } from '../graphql/payload.js';
import {
  lower,
  requireId,
  toGqlEvent,
  toGqlEventConnection,
  toGqlOrganizer,
  toGqlRegistration,
  toGqlTicketType,
} from './events.graphql-mappers.js';
import { COUNT, MODEL } from './events.graphql-parents.js';
import type { GqlEvent, GqlEventConnection } from './events.graphql-parents.js';
import type { EventFormatValue, EventVisibilityValue, RegistrationStatusValue } from './events.model.js';
import { EventsService } from './events.service.js';
import { GraphqlReaders } from './graphql-readers.js';
import { AnonymousListings } from './listing-anonymous.js';
import { RegistrationsService } from './registrations.service.js';
import { TicketTypesService } from './ticket-types.service.js';

type EventFields = 'organizer' | 'ticketTypes' | 'phase' | 'onlineUrl' | 'viewerRegistration' | 'registrations';

@Resolver('Event')
export class EventsResolver
  implements
    FieldResolvers<G.EventResolvers, G.Event, GqlEvent, EventFields>,
    RootResolvers<G.QueryResolvers, 'events' | 'event'>,
    RootResolvers<G.MutationResolvers, 'createEvent' | 'updateEvent' | 'publishEvent' | 'cancelEvent' | 'deleteEvent'>
{
  constructor(
    private readonly eventsService: EventsService,
    private readonly ticketTypesService: TicketTypesService,
    private readonly registrationsService: RegistrationsService,
    private readonly readers: GraphqlReaders,
    private readonly anonymousListings: AnonymousListings,
  ) {}

  @Query('events')
  @Public()
  async events(_root: unknown, args: G.QueryEventsArgs, ctx: GraphqlContext): Promise<GqlEventConnection> {
    const { startsAfter, startsBefore, organizerSlug, search } = args.filter ?? {};
    const filter = { startsAfter: startsAfter ?? null, startsBefore: startsBefore ?? null, organizerSlug, search };
    const direction = args.orderBy?.direction ?? 'ASC';
    const reader = this.readers.of(ctx);
    // Everyone without an account sees the same page: kept for them (PublicListingCache).
    const { page, totalCount } =
      reader.userId === null
        ? await this.anonymousListings.page(reader, filter, direction, toPageRequest(args))
        : await this.eventsService.list(filter, direction, toPageRequest(args));
    return toGqlEventConnection(page, totalCount);
  }

  @Query('event')
  @Public()
  async event(_root: unknown, args: G.QueryEventArgs, ctx: GraphqlContext): Promise<GqlEvent | null> {
    const { id, slug } = args;
    if ((id == null) === (slug == null))
      throw new GraphQLError('Give exactly one of id and slug.', { extensions: { code: 'BAD_USER_INPUT' } });
    const reader = this.readers.of(ctx);
    const eventId = id != null ? idOfType(id, 'Event') : null;
    const event =
      slug != null
        ? await this.eventsService.findVisibleBySlug(reader, slug)
        : eventId
          ? await this.eventsService.findVisible(reader, eventId)
          : null;
    return event ? toGqlEvent(event) : null;
  }

  @ResolveField('organizer')
  async organizer(event: GqlEvent, _args: unknown, ctx: GraphqlContext) {
    return toGqlOrganizer((await this.readers.of(ctx).organizers.load(event[MODEL].organizerId))!);
  }

  @ResolveField('ticketTypes')
  async ticketTypes(event: GqlEvent, _args: unknown, ctx: GraphqlContext) {
    return (await this.ticketTypesService.visibleOfEvent(this.readers.of(ctx), event[MODEL])).map(toGqlTicketType);
  }

  @ResolveField('phase')
  phase(event: GqlEvent): G.EventPhase {
    return this.eventsService.phaseOf(event[MODEL]).toUpperCase() as G.EventPhase;
  }

  @ResolveField('onlineUrl')
  onlineUrl(event: GqlEvent, _args: unknown, ctx: GraphqlContext): Promise<string | null> {
    return this.eventsService.onlineUrlFor(this.readers.of(ctx), event[MODEL]);
  }

  @ResolveField('viewerRegistration')
  async viewerRegistration(event: GqlEvent, _args: unknown, ctx: GraphqlContext) {
    const registration = await this.readers.of(ctx).activeRegistration(event[MODEL].id);
    return registration ? toGqlRegistration(registration) : null;
  }

  @ResolveField('registrations')
  async registrations(event: GqlEvent, args: G.EventRegistrationsArgs, ctx: GraphqlContext) {
    const model = event[MODEL];
    await this.registrationsService.requireCanSeeRegistrationsOf(this.readers.of(ctx), model);
    const status = args.status ? lower<RegistrationStatusValue>(args.status) : null;
    const page = await this.readers.page(ctx, 'Event.registrations', args, model.id, (ids) =>
      this.registrationsService.pagesOfEvents(ids, status, toPageRequest(args)),
    );
    return toConnection(page, toGqlRegistration);
  }

  @Mutation('createEvent')
  createEvent(_root: unknown, { input }: G.MutationCreateEventArgs, ctx: GraphqlContext) {
    return toPayload('event', async () => {
      const organizerId = requireId(input.organizerId, 'Organizer', 'organizerId');
      return toGqlEvent(
        await this.eventsService.create(this.readers.of(ctx), {
          ...input,
          organizerId,
          format: lower<EventFormatValue>(input.format),
          visibility: input.visibility ? lower<EventVisibilityValue>(input.visibility) : null,
        }),
      );
    });
  }

  @Mutation('updateEvent')
  updateEvent(_root: unknown, { input }: G.MutationUpdateEventArgs, ctx: GraphqlContext) {
    return toPayload('event', async () => {
      const eventId = requireId(input.eventId, 'Event', 'eventId');
      return toGqlEvent(
        await this.eventsService.update(this.readers.of(ctx), eventId, {
          ...input,
          startsAt: input.startsAt ?? null,
          endsAt: input.endsAt ?? null,
          format: input.format ? lower<EventFormatValue>(input.format) : null,
          visibility: input.visibility ? lower<EventVisibilityValue>(input.visibility) : null,
        }),
      );
    });
  }

  @Mutation('publishEvent')
  publishEvent(_root: unknown, { input }: G.MutationPublishEventArgs, ctx: GraphqlContext) {
    return toPayload('event', async () =>
      toGqlEvent(await this.eventsService.publish(this.readers.of(ctx), requireId(input.eventId, 'Event', 'eventId'))),
    );
  }

  @Mutation('cancelEvent')
  cancelEvent(_root: unknown, { input }: G.MutationCancelEventArgs, ctx: GraphqlContext) {
    return toPayload('event', async () =>
      toGqlEvent(await this.eventsService.cancel(this.readers.of(ctx), requireId(input.eventId, 'Event', 'eventId'))),
    );
  }

  @Mutation('deleteEvent')
  deleteEvent(_root: unknown, { input }: G.MutationDeleteEventArgs, ctx: GraphqlContext) {
    return toPayload('deletedEventId', async () => {
      await this.eventsService.delete(this.readers.of(ctx), requireId(input.eventId, 'Event', 'eventId'));
      return input.eventId;
    });
  }
}

@Resolver('EventConnection')
export class EventConnectionResolver implements FieldResolvers<
  G.EventConnectionResolvers,
  G.EventConnection,
  GqlEventConnection,
  'totalCount'
> {
  /**
   * A field resolver, not a function left on the connection for graphql-js's default resolver to call:
   * compiled execution reads fields without a resolver as plain values (see CompiledExecution).
   */
  @ResolveField('totalCount')
  totalCount(connection: GqlEventConnection): Promise<number> {
    return connection[COUNT]();
  }
}
