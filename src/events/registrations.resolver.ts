import { Args, Context, Mutation, ResolveField, Resolver } from '@nestjs/graphql';
import { toConnection, toPageRequest } from '../graphql/connection.js';
import type { ConnectionArgs } from '../graphql/connection.js';
import type { GraphqlContext } from '../graphql/graphql-context.js';
import type * as G from '../graphql/graphql.schema.js';
import { EventError } from './events.errors.js';
import {
  lower,
  MODEL,
  requireId,
  toGqlAttendee,
  toGqlEvent,
  toGqlMember,
  toGqlRegistration,
  toGqlTicketType,
  toGqlUser,
  toPayload,
} from './events.graphql-mappers.js';
import type { GqlAttendee, GqlRegistration } from './events.graphql-mappers.js';
import type { RegistrationStatusValue } from './events.model.js';
import { GraphqlReaders } from './graphql-readers.js';
import { OrganizersService } from './organizers.service.js';
import { RegistrationsService } from './registrations.service.js';

@Resolver('Registration')
export class RegistrationsResolver {
  constructor(
    private readonly registrations: RegistrationsService,
    private readonly readers: GraphqlReaders,
  ) {}

  @ResolveField('event')
  async event(registration: GqlRegistration, _args: unknown, ctx: GraphqlContext) {
    return toGqlEvent((await this.readers.of(ctx).events.load(registration[MODEL].eventId))!);
  }

  // A registrant sees the ticket type they hold, even one hidden since.
  @ResolveField('ticketType')
  async ticketType(registration: GqlRegistration, _args: unknown, ctx: GraphqlContext) {
    return toGqlTicketType((await this.readers.of(ctx).ticketTypes.load(registration[MODEL].ticketTypeId))!);
  }

  @ResolveField('user')
  async user(registration: GqlRegistration, _args: unknown, ctx: GraphqlContext) {
    return toGqlUser((await this.readers.of(ctx).users.load(registration[MODEL].userId))!);
  }

  @ResolveField('attendees')
  async attendees(registration: GqlRegistration, _args: unknown, ctx: GraphqlContext) {
    return (await this.readers.of(ctx).attendeesOfRegistration.load(registration[MODEL].id)).map(toGqlAttendee);
  }

  @Mutation('registerForEvent')
  register(@Args('input') input: G.RegisterForEventInput, @Context() ctx: GraphqlContext) {
    return toPayload('registration', async () => {
      const eventId = requireId(input.eventId, 'Event', 'eventId');
      const ticketTypeId = requireId(input.ticketTypeId, 'TicketType', 'ticketTypeId');
      return toGqlRegistration(
        await this.registrations.register(this.readers.of(ctx), { eventId, ticketTypeId, attendees: input.attendees }),
      );
    });
  }

  @Mutation('cancelRegistration')
  cancel(@Args('input') input: G.CancelRegistrationInput, @Context() ctx: GraphqlContext) {
    return toPayload('registration', async () =>
      toGqlRegistration(
        await this.registrations.cancel(this.readers.of(ctx), requireId(input.registrationId, 'Registration', 'registrationId')),
      ),
    );
  }

  @Mutation('checkInAttendee')
  checkIn(@Args('input') input: G.CheckInAttendeeInput, @Context() ctx: GraphqlContext) {
    return toPayload('attendee', async () =>
      toGqlAttendee(await this.registrations.checkIn(this.readers.of(ctx), requireId(input.attendeeId, 'Attendee', 'attendeeId'))),
    );
  }
}

@Resolver('Attendee')
export class AttendeesResolver {
  constructor(private readonly readers: GraphqlReaders) {}

  @ResolveField('registration')
  async registration(attendee: GqlAttendee, _args: unknown, ctx: GraphqlContext) {
    return toGqlRegistration((await this.readers.of(ctx).registrations.load(attendee[MODEL].registrationId))!);
  }
}

/** The viewer's own lists on `User`; asked of anyone else, they are FORBIDDEN. */
@Resolver('User')
export class ViewerListsResolver {
  constructor(
    private readonly registrations: RegistrationsService,
    private readonly organizers: OrganizersService,
  ) {}

  @ResolveField('registrations')
  async registrationsOf(user: G.User, args: ConnectionArgs & { status?: G.RegistrationStatus }, ctx: GraphqlContext) {
    requireViewer(user, ctx, 'registrations');
    const status = args.status ? lower<RegistrationStatusValue>(args.status) : null;
    return toConnection(await this.registrations.pageOfUser(user.id, status, toPageRequest(args)), toGqlRegistration);
  }

  @ResolveField('organizerMemberships')
  async organizerMemberships(user: G.User, args: ConnectionArgs, ctx: GraphqlContext) {
    requireViewer(user, ctx, 'organizer memberships');
    return toConnection(await this.organizers.membershipsOf(user.id, toPageRequest(args)), toGqlMember);
  }
}

function requireViewer(user: G.User, ctx: GraphqlContext, what: string): void {
  if (ctx.principal?.user.id !== user.id) throw new EventError('FORBIDDEN', `Only ${what} of the authenticated user (viewer) can be read.`);
}
