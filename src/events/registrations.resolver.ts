import { Mutation, ResolveField, Resolver } from '@nestjs/graphql';
import { toConnection, toPageRequest } from '../graphql/connection.js';
import type { GraphqlContext } from '../graphql/graphql-context.js';
import type * as G from '../generated/graphql-resolvers.js';
import type { FieldResolvers, RootResolvers } from '../graphql/resolver-types.js';
import { toPayload } from '../graphql/payload.js';
import type { UserProfile } from '../users/user.model.js';
import { lower, requireId, toGqlAttendee, toGqlEvent, toGqlMember, toGqlRegistration, toGqlTicketType } from './events.graphql-mappers.js';
import { MODEL } from './events.graphql-parents.js';
import type { GqlAttendee, GqlEvent, GqlRegistration, GqlTicketType } from './events.graphql-parents.js';
import type { RegistrationStatusValue } from './events.model.js';
import { GraphqlReaders } from './graphql-readers.js';
import { OrganizersService } from './organizers.service.js';
import { RegistrationsService } from './registrations.service.js';

@Resolver('Registration')
export class RegistrationsResolver
  implements
    FieldResolvers<G.RegistrationResolvers, G.Registration, GqlRegistration, 'event' | 'ticketType' | 'user' | 'attendees'>,
    RootResolvers<G.MutationResolvers, 'registerForEvent' | 'cancelRegistration' | 'checkInAttendee' | 'undoCheckIn'>
{
  constructor(
    private readonly registrationsService: RegistrationsService,
    private readonly readers: GraphqlReaders,
  ) {}

  @ResolveField('event')
  async event(registration: GqlRegistration, _args: unknown, ctx: GraphqlContext): Promise<GqlEvent> {
    return toGqlEvent((await this.readers.of(ctx).events.load(registration[MODEL].eventId))!);
  }

  // A registrant sees the ticket type they hold, even one hidden since.
  @ResolveField('ticketType')
  async ticketType(registration: GqlRegistration, _args: unknown, ctx: GraphqlContext): Promise<GqlTicketType> {
    return toGqlTicketType((await this.readers.of(ctx).ticketTypes.load(registration[MODEL].ticketTypeId))!);
  }

  // The caller's own registration (every answer of registerForEvent and cancelRegistration by its
  // registrant) names the caller, whose profile the request already has, as `viewer` does: no read,
  // so such an answer never depends on the database after its commit.
  @ResolveField('user')
  async user(registration: GqlRegistration, _args: unknown, ctx: GraphqlContext): Promise<UserProfile> {
    const viewer = ctx.principal?.user;
    if (viewer && viewer.id === registration[MODEL].userId) return viewer;
    return (await this.readers.of(ctx).users.load(registration[MODEL].userId))!;
  }

  @ResolveField('attendees')
  async attendees(registration: GqlRegistration, _args: unknown, ctx: GraphqlContext): Promise<GqlAttendee[]> {
    return (await this.readers.of(ctx).attendeesOfRegistration.load(registration[MODEL].id)).map(toGqlAttendee);
  }

  @Mutation('registerForEvent')
  registerForEvent(_root: unknown, { input }: G.MutationRegisterForEventArgs, ctx: GraphqlContext) {
    return toPayload('registration', async () => {
      const eventId = requireId(input.eventId, 'Event', 'eventId');
      const ticketTypeId = requireId(input.ticketTypeId, 'TicketType', 'ticketTypeId');
      return toGqlRegistration(
        await this.registrationsService.register(this.readers.of(ctx), { eventId, ticketTypeId, attendees: input.attendees }),
      );
    });
  }

  @Mutation('cancelRegistration')
  cancelRegistration(_root: unknown, { input }: G.MutationCancelRegistrationArgs, ctx: GraphqlContext) {
    return toPayload('registration', async () =>
      toGqlRegistration(
        await this.registrationsService.cancel(this.readers.of(ctx), requireId(input.registrationId, 'Registration', 'registrationId')),
      ),
    );
  }

  @Mutation('checkInAttendee')
  async checkInAttendee(_root: unknown, { input }: G.MutationCheckInAttendeeArgs, ctx: GraphqlContext) {
    const { checkIn, userErrors } = await toPayload('checkIn', async () => {
      const checkIn = await this.registrationsService.checkIn(this.readers.of(ctx), {
        attendeeId: input.attendeeId == null ? null : requireId(input.attendeeId, 'Attendee', 'attendeeId'),
        code: input.code,
        eventId: input.eventId == null ? null : requireId(input.eventId, 'Event', 'eventId'),
      });
      return { attendee: toGqlAttendee(checkIn.attendee), alreadyCheckedIn: checkIn.alreadyCheckedIn };
    });
    return { attendee: checkIn?.attendee ?? null, alreadyCheckedIn: checkIn?.alreadyCheckedIn ?? false, userErrors };
  }

  @Mutation('undoCheckIn')
  undoCheckIn(_root: unknown, { input }: G.MutationUndoCheckInArgs, ctx: GraphqlContext) {
    return toPayload('attendee', async () =>
      toGqlAttendee(
        await this.registrationsService.undoCheckIn(this.readers.of(ctx), requireId(input.attendeeId, 'Attendee', 'attendeeId')),
      ),
    );
  }
}

@Resolver('Attendee')
export class AttendeesResolver implements FieldResolvers<G.AttendeeResolvers, G.Attendee, GqlAttendee, 'registration' | 'ticketCode'> {
  constructor(
    private readonly registrationsService: RegistrationsService,
    private readonly readers: GraphqlReaders,
  ) {}

  @ResolveField('ticketCode')
  ticketCode(attendee: GqlAttendee, _args: unknown, ctx: GraphqlContext): Promise<string | null> {
    return this.registrationsService.ticketCodeOf(this.readers.of(ctx), attendee[MODEL]);
  }

  @ResolveField('registration')
  async registration(attendee: GqlAttendee, _args: unknown, ctx: GraphqlContext): Promise<GqlRegistration> {
    return toGqlRegistration((await this.readers.of(ctx).registrations.load(attendee[MODEL].registrationId))!);
  }
}

/** The viewer's own lists on `User`; asked of anyone else, they are FORBIDDEN. */
@Resolver('User')
export class ViewerListsResolver implements RootResolvers<G.UserResolvers, 'registrations' | 'organizerMemberships'> {
  constructor(
    private readonly registrationsService: RegistrationsService,
    private readonly organizersService: OrganizersService,
    private readonly readers: GraphqlReaders,
  ) {}

  @ResolveField('registrations')
  async registrations(user: UserProfile, args: G.UserRegistrationsArgs, ctx: GraphqlContext) {
    const status = args.status ? lower<RegistrationStatusValue>(args.status) : null;
    const page = await this.registrationsService.pageOfUser(this.readers.of(ctx), user.id, status, toPageRequest(args));
    return toConnection(page, toGqlRegistration);
  }

  @ResolveField('organizerMemberships')
  async organizerMemberships(user: UserProfile, args: G.UserOrganizerMembershipsArgs, ctx: GraphqlContext) {
    return toConnection(await this.organizersService.membershipsOf(this.readers.of(ctx), user.id, toPageRequest(args)), toGqlMember);
  }
}
