import { Args, Context, Mutation, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { GraphQLError } from 'graphql';
import { Public } from '../auth/public.decorator.js';
import { Clock } from '../clock/clock.js';
import { toConnection, toPageRequest } from '../graphql/connection.js';
import type { ConnectionArgs } from '../graphql/connection.js';
import { idOfType } from '../graphql/global-id.js';
import type { GraphqlContext } from '../graphql/graphql-context.js';
import type * as G from '../graphql/graphql.schema.js';
import { EventError } from './events.errors.js';
import {
  COUNT,
  lower,
  MODEL,
  requireId,
  toGqlEvent,
  toGqlEventConnection,
  toGqlOrganizer,
  toGqlRegistration,
  toGqlTicketType,
  toPayload,
} from './events.graphql-mappers.js';
import type { GqlEvent, GqlEventConnection } from './events.graphql-mappers.js';
import type { EventFormatValue, EventVisibilityValue, RegistrationStatusValue } from './events.model.js';
import { EventsPolicy } from './events.policy.js';
import { EventsService } from './events.service.js';
import { GraphqlReaders } from './graphql-readers.js';
import { RegistrationsService } from './registrations.service.js';
import { TicketTypesService } from './ticket-types.service.js';

@Resolver('Event')
export class EventsResolver {
  constructor(
    private readonly events: EventsService,
    private readonly ticketTypes: TicketTypesService,
    private readonly registrations: RegistrationsService,
    private readonly readers: GraphqlReaders,
    private readonly clock: Clock,
  ) {}

  @Query('events')
  @Public()
  async list(@Args() args: ConnectionArgs & { filter?: G.EventFilter; orderBy?: G.EventOrder }) {
    const filter = args.filter ?? {};
    const { page, totalCount } = await this.events.list(
      {
        startsAfter: filter.startsAfter ? new Date(filter.startsAfter) : null,
        startsBefore: filter.startsBefore ? new Date(filter.startsBefore) : null,
        organizerSlug: filter.organizerSlug,
        search: filter.search,
      },
      args.orderBy?.direction ?? 'ASC',
      toPageRequest(args),
    );
    return toGqlEventConnection(page, totalCount);
  }

  @Query('event')
  @Public()
  async event(
    @Args('id') id: string | undefined,
    @Args('slug') slug: string | undefined,
    @Context() ctx: GraphqlContext,
  ): Promise<GqlEvent | null> {
    if ((id == null) === (slug == null))
      throw new GraphQLError('Give exactly one of id and slug.', { extensions: { code: 'BAD_USER_INPUT' } });
    const reader = this.readers.of(ctx);
    const eventId = id != null ? idOfType(id, 'Event') : null;
    const event =
      slug != null ? await this.events.findVisibleBySlug(reader, slug) : eventId ? await this.events.findVisible(reader, eventId) : null;
    return event ? toGqlEvent(event) : null;
  }

  @ResolveField('organizer')
  async organizer(event: GqlEvent, _args: unknown, ctx: GraphqlContext) {
    return toGqlOrganizer((await this.readers.of(ctx).organizers.load(event[MODEL].organizerId))!);
  }

  @ResolveField('ticketTypes')
  async ticketTypesOf(event: GqlEvent, _args: unknown, ctx: GraphqlContext) {
    return (await this.ticketTypes.visibleOfEvent(this.readers.of(ctx), event[MODEL])).map(toGqlTicketType);
  }

  @ResolveField('phase')
  phase(event: GqlEvent): G.EventPhase {
    const now = this.clock.now().getTime();
    const { startsAt, endsAt } = event[MODEL];
    return (now < startsAt.getTime() ? 'UPCOMING' : now < endsAt.getTime() ? 'ONGOING' : 'ENDED') as G.EventPhase;
  }

  @ResolveField('onlineUrl')
  async onlineUrl(event: GqlEvent, _args: unknown, ctx: GraphqlContext): Promise<string | null> {
    const model = event[MODEL];
    if (!model.onlineUrl) return null;
    const reader = this.readers.of(ctx);
    if (!reader.userId) return null;
    const [role, registration] = await Promise.all([reader.role(model.organizerId), reader.activeRegistration(model.id)]);
    return EventsPolicy.canSeeOnlineUrl(role, registration?.status === 'confirmed') ? model.onlineUrl : null;
  }

  @ResolveField('viewerRegistration')
  async viewerRegistration(event: GqlEvent, _args: unknown, ctx: GraphqlContext) {
    const registration = await this.readers.of(ctx).activeRegistration(event[MODEL].id);
    return registration ? toGqlRegistration(registration) : null;
  }

  @ResolveField('registrations')
  async registrationsOf(event: GqlEvent, args: ConnectionArgs & { status?: G.RegistrationStatus }, ctx: GraphqlContext) {
    const model = event[MODEL];
    const role = await this.readers.of(ctx).role(model.organizerId);
    if (!EventsPolicy.canSeeAttendees(role)) throw EventError.forbidden("see this event's registrations");
    const status = args.status ? lower<RegistrationStatusValue>(args.status) : null;
    const page = await this.readers.page(ctx, 'Event.registrations', args, model.id, (ids) =>
      this.registrations.pagesOfEvents(ids, status, toPageRequest(args)),
    );
    return toConnection(page, toGqlRegistration);
  }

  @Mutation('createEvent')
  createEvent(@Args('input') input: G.CreateEventInput, @Context() ctx: GraphqlContext) {
    return toPayload('event', async () => {
      const organizerId = requireId(input.organizerId, 'Organizer', 'organizerId');
      return toGqlEvent(
        await this.events.create(this.readers.of(ctx), {
          ...input,
          organizerId,
          startsAt: new Date(input.startsAt),
          endsAt: new Date(input.endsAt),
          format: lower<EventFormatValue>(input.format),
          visibility: input.visibility ? lower<EventVisibilityValue>(input.visibility) : null,
        }),
      );
    });
  }

  @Mutation('updateEvent')
  updateEvent(@Args('input') input: G.UpdateEventInput, @Context() ctx: GraphqlContext) {
    return toPayload('event', async () => {
      const eventId = requireId(input.eventId, 'Event', 'eventId');
      return toGqlEvent(
        await this.events.update(this.readers.of(ctx), eventId, {
          ...input,
          startsAt: input.startsAt ? new Date(input.startsAt) : null,
          endsAt: input.endsAt ? new Date(input.endsAt) : null,
          format: input.format ? lower<EventFormatValue>(input.format) : null,
          visibility: input.visibility ? lower<EventVisibilityValue>(input.visibility) : null,
        }),
      );
    });
  }

  @Mutation('publishEvent')
  publishEvent(@Args('input') input: G.EventIdInput, @Context() ctx: GraphqlContext) {
    return toPayload('event', async () =>
      toGqlEvent(await this.events.publish(this.readers.of(ctx), requireId(input.eventId, 'Event', 'eventId'))),
    );
  }

  @Mutation('cancelEvent')
  cancelEvent(@Args('input') input: G.EventIdInput, @Context() ctx: GraphqlContext) {
    return toPayload('event', async () =>
      toGqlEvent(await this.events.cancel(this.readers.of(ctx), requireId(input.eventId, 'Event', 'eventId'))),
    );
  }

  @Mutation('deleteEvent')
  deleteEvent(@Args('input') input: G.EventIdInput, @Context() ctx: GraphqlContext) {
    return toPayload('deletedEventId', async () => {
      await this.events.delete(this.readers.of(ctx), requireId(input.eventId, 'Event', 'eventId'));
      return input.eventId;
    });
  }
}

@Resolver('EventConnection')
export class EventConnectionResolver {
  /**
   * A field resolver, not a function left on the connection for graphql-js's default resolver to call:
   * compiled execution reads fields without a resolver as plain values (see CompiledExecution).
   */
  @ResolveField('totalCount')
  totalCount(connection: GqlEventConnection): Promise<number> {
    return connection[COUNT]();
  }
}
