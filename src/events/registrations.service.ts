import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomInt } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../clock/clock.js';
import type { Page, PageRequest, SortKey } from '../database/keyset.js';
import { KeysetPager } from '../database/keyset-pager.js';
import { fetchNumberedPage, NumberedPage } from '../database/offset-page.js';
import { violatedUniqueConstraint } from '../database/postgres-errors.js';
import { AttendeeInput, checkAttendees } from './event-validation.js';
import { EventNotices } from './event-notices.js';
import { EventError } from './events.errors.js';
import type { Attendee, CancelledByValue, Event, Registration, RegistrationStatusValue } from './events.model.js';
import { EventsPolicy } from './events.policy.js';
import type { EventsReader } from './events.reader.js';
import { EventTables } from './event-tables.js';
import { EventsService } from './events.service.js';
import { TicketTypesService } from './ticket-types.service.js';
import { salesState } from './schedule.js';
import { TicketCodes } from './ticket-codes.js';
import { promoteWaitlist } from './waitlist.js';

/** The attendee to check in: exactly one of `attendeeId` and `code` (a scanned ticket code). */
export interface CheckInTarget {
  attendeeId?: string | null;
  code?: string | null;
  /** The event the door admits people to; a ticket for another event is refused. */
  eventId?: string | null;
}

export interface CheckIn {
  /** The attendee, with the time of their first check-in. */
  attendee: Attendee;
  /** True when this was not the first check-in: the attendee had already come in. */
  alreadyCheckedIn: boolean;
}

export interface RegistrationInput {
  eventId: string;
  ticketTypeId: string;
  attendees: AttendeeInput[];
}

const byCreation = (list: 'Event.registrations' | 'User.registrations', direction: 'ASC' | 'DESC'): SortKey => ({
  list,
  columns: [
    { sql: 'r.created_at', type: 'timestamptz' },
    { sql: 'r.id', type: 'uuid' },
  ],
  direction,
});
/** An event's registrations, oldest first. */
const EVENT_REGISTRATIONS = byCreation('Event.registrations', 'ASC');
/** A user's own registrations, newest first. */
const USER_REGISTRATIONS = byCreation('User.registrations', 'DESC');

// No 0/O or 1/I: references are read aloud at the door.
const REFERENCE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/**
 * Registrations and their attendees. Every change to seats happens in a transaction holding the
 * event's row lock, and the counters it moves are bounded by CHECK constraints: capacity and ticket
 * quantities hold whatever the concurrency.
 */
@Injectable()
export class RegistrationsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: EventsService,
    private readonly ticketTypes: TicketTypesService,
    private readonly clock: Clock,
    private readonly pages: KeysetPager,
    private readonly tables: EventTables,
    private readonly ticketCodes: TicketCodes,
    private readonly notices: EventNotices,
  ) {}

  async register(reader: EventsReader, input: RegistrationInput): Promise<Registration> {
    const userId = reader.userId;
    if (!userId) throw EventError.forbidden('register without signing in');
    const event = await this.events.findVisible(reader, input.eventId);
    if (!event) throw EventError.notFound('Event', 'eventId');
    const ticketType = await this.ticketTypes.findVisible(reader, input.ticketTypeId);
    if (!ticketType || ticketType.eventId !== event.id) throw EventError.notFound('TicketType', 'ticketTypeId');
    const attendees = checkAttendees(input.attendees, ticketType);
    const quantity = attendees.length;
    const now = this.clock.now();

    const { registrations } = this.tables;
    try {
      return await reader.changeEvent(event.id, async (tx) => {
        const [state] = (await tx.query(
          `SELECT e.status, e.ends_at, e.capacity, e.confirmed_seats, t.quantity, t.sold, t.sales_start_at, t.sales_end_at
             FROM events e JOIN ticket_types t ON t.event_id = e.id
            WHERE e.id = $1 AND t.id = $2`,
          [event.id, ticketType.id],
        )) as SeatState[];
        if (!state) throw EventError.notFound('TicketType', 'ticketTypeId');
        checkOpen(state, now);
        const active = (await tx.query(`SELECT 1 FROM registrations WHERE event_id = $1 AND user_id = $2 AND status <> 'cancelled'`, [
          event.id,
          userId,
        ])) as unknown[];
        if (active.length)
          throw new EventError(
            'ALREADY_REGISTERED',
            'You are already registered for this event; cancel that registration first.',
            'eventId',
          );

        const fits =
          (state.capacity === null || state.confirmed_seats + quantity <= state.capacity) &&
          (state.quantity === null || state.sold + quantity <= state.quantity);
        const status: RegistrationStatusValue = fits ? 'confirmed' : 'waitlisted';
        const [row] = (await tx.query(
          `INSERT INTO registrations AS r (event_id, ticket_type_id, user_id, reference, status, quantity, created_at, confirmed_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $7) RETURNING ${registrations.select}`,
          [event.id, ticketType.id, userId, newReference(), status, quantity, now, fits ? now : null],
        )) as Record<string, unknown>[];
        await tx.query(
          `INSERT INTO attendees (registration_id, name, email, position, created_at)
           SELECT $1, a.name, a.email, a.position, $2 FROM unnest($3::text[], $4::text[], $5::int[]) AS a(name, email, position)`,
          [row!.id, now, attendees.map((a) => a.name), attendees.map((a) => a.email), attendees.map((_, i) => i + 1)],
        );
        if (fits) await this.takeSeats(tx, event.id, ticketType.id, quantity);
        await this.notices.registration(tx, {
          message: fits ? 'registration.confirmed' : 'registration.waitlisted',
          registrationId: row!.id as string,
        });
        return registrations.map(row!);
      });
    } catch (err) {
      if (violatedUniqueConstraint(err) === 'registrations_one_active_per_user_idx') {
        throw new EventError('ALREADY_REGISTERED', 'You are already registered for this event; cancel that registration first.', 'eventId');
      }
      throw err;
    }
  }

  /**
   * Cancels a registration; freed seats go to the waitlist. Its registrant may, until one of its
   * attendees has checked in (CHECKED_IN: a ticket used at the door is not given back); the organizer's
   * owners and admins always may (a mistaken check-in, someone sent away). Recorded in `cancelled_by`.
   */
  async cancel(reader: EventsReader, registrationId: string): Promise<Registration> {
    const registration = await this.findVisible(reader, registrationId);
    if (!registration) throw EventError.notFound('Registration', 'registrationId');
    const by: CancelledByValue = registration.userId === reader.userId ? 'attendee' : 'organizer';
    if (by === 'organizer') {
      await this.events.requireRole(reader, registration.eventId, EventsPolicy.canManage, 'cancel registrations for this event');
    }
    const now = this.clock.now();
    const { registrations } = this.tables;
    const cancelled = await reader.changeEvent(registration.eventId, async (tx) => {
      // The row lock orders this after a check-in in flight (which holds the row FOR SHARE), so the
      // UPDATE below, a statement of its own, sees that check-in.
      const [current] = (await tx.query(`SELECT status, ticket_type_id, quantity FROM registrations WHERE id = $1 FOR UPDATE`, [
        registrationId,
      ])) as { status: RegistrationStatusValue; ticket_type_id: string; quantity: number }[];
      if (current!.status === 'cancelled')
        throw new EventError('ALREADY_CANCELLED', 'This registration is already cancelled.', 'registrationId');
      const [[row]] = (await tx.query(
        `UPDATE registrations r SET status = 'cancelled', cancelled_at = $2, cancelled_by = $3, updated_at = $2
          WHERE r.id = $1 AND ($3 = 'organizer' OR NOT EXISTS (SELECT 1 FROM attendees a WHERE a.registration_id = r.id AND a.checked_in_at IS NOT NULL))
          RETURNING ${registrations.select}`,
        [registrationId, now, by],
      )) as [Record<string, unknown>[], number];
      if (!row)
        throw new EventError(
          'CHECKED_IN',
          'An attendee of this registration has checked in: only the organizer can cancel it now.',
          'registrationId',
        );
      // Registrations the freed seats confirmed from the waitlist.
      let promoted: string[] = [];
      if (current!.status === 'confirmed') {
        await this.takeSeats(tx, registration.eventId, current!.ticket_type_id, -current!.quantity);
        const [event] = (await tx.query(`SELECT status, ends_at FROM events WHERE id = $1`, [registration.eventId])) as {
          status: string;
          ends_at: Date;
        }[];
        if (event!.status === 'published' && event!.ends_at > now)
          promoted = await promoteWaitlist(tx, registration.eventId, now, this.notices);
      }
      await this.notices.registration(tx, { message: 'registration.cancelled', registrationId, by });
      return { row: row!, by, promoted };
    });
    return registrations.map(cancelled.row);
  }

  /**
   * Records an attendee's arrival, found by id or by the code of their ticket (`TicketCodes`); any
   * member of the organizer may do it. Idempotent: a second scan answers the first check-in's time with
   * `alreadyCheckedIn`. With `eventId` (the event a door admits people to), a ticket for another event
   * is refused (WRONG_EVENT).
   */
  async checkIn(reader: EventsReader, target: CheckInTarget): Promise<CheckIn> {
    const attendeeId = await this.attendeeToCheckIn(reader, target);
    const attendee = await this.findVisibleAttendee(reader, attendeeId);
    if (!attendee) throw EventError.notFound('Attendee', 'attendeeId');
    const registration = (await reader.registrations.load(attendee.registrationId))!;
    if (target.eventId && target.eventId !== registration.eventId)
      throw new EventError('WRONG_EVENT', 'This ticket is for another event.', target.code ? 'code' : 'attendeeId');
    await this.events.requireRole(reader, registration.eventId, EventsPolicy.canSeeAttendees, 'check attendees in');
    const notConfirmed = () =>
      new EventError('NOT_CONFIRMED', 'Only attendees of a confirmed registration can be checked in.', target.code ? 'code' : 'attendeeId');
    if (registration.status !== 'confirmed') throw notConfirmed();
    const { attendees } = this.tables;
    // FOR SHARE: a cancellation of the registration waits for this check-in, or this one for it.
    const [checkedIn] = (await reader.writeEvent(registration.eventId, (db) =>
      db.query(
        `WITH r AS (SELECT id FROM registrations WHERE id = $3 AND status = 'confirmed' FOR SHARE)
         UPDATE attendees a SET checked_in_at = $2 FROM r WHERE a.id = $1 AND a.registration_id = r.id AND a.checked_in_at IS NULL
         RETURNING ${attendees.select}`,
        [attendeeId, this.clock.now(), registration.id],
      ),
    )) as [Record<string, unknown>[], number];
    if (checkedIn[0]) return { attendee: attendees.map(checkedIn[0]), alreadyCheckedIn: false };
    const [earlier] = (await this.dataSource.query(
      `SELECT ${attendees.select}, r.status AS registration_status FROM attendees a JOIN registrations r ON r.id = a.registration_id WHERE a.id = $1`,
      [attendeeId],
    )) as Record<string, unknown>[];
    if (earlier?.registration_status !== 'confirmed' || !earlier.checked_in_at) throw notConfirmed();
    return { attendee: attendees.map(earlier), alreadyCheckedIn: true };
  }

  /**
   * The code of an attendee's ticket, for the person who registered, while the registration is
   * confirmed, for an event with a venue (an online event has no door); null otherwise.
   */
  async ticketCodeOf(reader: EventsReader, attendee: Attendee): Promise<string | null> {
    const registration = await reader.registrations.load(attendee.registrationId);
    if (!registration || registration.userId !== reader.userId || registration.status !== 'confirmed') return null;
    const event = await reader.events.load(registration.eventId);
    if (!event || event.format === 'online') return null;
    return this.ticketCodes.issue({
      attendeeId: attendee.id,
      registrationId: registration.id,
      eventId: event.id,
      userId: registration.userId,
    });
  }

  /** The attendee a check-in names: by id, or by a ticket code this server signed. */
  private async attendeeToCheckIn(reader: EventsReader, target: CheckInTarget): Promise<string> {
    if ((target.attendeeId == null) === (target.code == null))
      throw new EventError('ATTENDEE_OR_CODE_REQUIRED', 'Give the attendee or the code of their ticket, not both.', 'code');
    if (target.attendeeId != null) return target.attendeeId;
    const ticket = await this.ticketCodes.verify(target.code!.trim());
    if (!ticket) throw new EventError('INVALID_TICKET_CODE', 'This is not a valid ticket code: it was altered or not issued here.', 'code');
    const event = await reader.events.load(ticket.eventId);
    const role = event ? await reader.role(event.organizerId) : null;
    if (!event || !EventsPolicy.canSeeAttendees(role))
      throw new EventError('WRONG_EVENT', 'This ticket is for an event you do not check people in for.', 'code');
    const attendee = await reader.attendees.load(ticket.attendeeId);
    if (!attendee || attendee.registrationId !== ticket.registrationId)
      throw new EventError('INVALID_TICKET_CODE', 'This ticket no longer exists.', 'code');
    return attendee.id;
  }

  /** The registration, if the caller made it or belongs to the event's organizer. */
  async findVisible(reader: EventsReader, registrationId: string): Promise<Registration | null> {
    const registration = await reader.registrations.load(registrationId);
    if (!registration || !reader.userId) return null;
    return (await this.canSee(reader, registration)) ? registration : null;
  }

  async findVisibleAttendee(reader: EventsReader, attendeeId: string): Promise<Attendee | null> {
    const attendee = await reader.attendees.load(attendeeId);
    if (!attendee) return null;
    return (await this.findVisible(reader, attendee.registrationId)) ? attendee : null;
  }

  /** Whether the caller may see a registration and its attendees' emails. */
  async canSee(reader: EventsReader, registration: Registration): Promise<boolean> {
    if (registration.userId === reader.userId) return true;
    const event = await reader.events.load(registration.eventId);
    return !!event && EventsPolicy.canSeeAttendees(await reader.role(event.organizerId));
  }

  /** The registrations of several events, one page each, oldest first. Callers check who may see them. */
  pagesOfEvents(
    eventIds: readonly string[],
    status: RegistrationStatusValue | null,
    request: PageRequest,
  ): Promise<Map<string, Page<Registration>>> {
    return this.pages.pagesByParent(
      {
        select: this.tables.registrations.select,
        from: 'registrations r',
        where: status ? ['r.status = $1'] : [],
        params: status ? [status] : [],
      },
      'r.event_id',
      eventIds,
      EVENT_REGISTRATIONS,
      request,
      this.tables.registrations.map,
    );
  }

  /** A user's own registrations, newest first. */
  /** A user's registrations, newest first: only the user themselves (the caller of `reader`) may list them. */
  pageOfUser(
    reader: EventsReader,
    userId: string,
    status: RegistrationStatusValue | null,
    request: PageRequest,
  ): Promise<Page<Registration>> {
    if (!EventsPolicy.canReadOwnLists(reader.userId, userId)) throw EventError.viewerOnly('registrations');
    const where = ['r.user_id = $1', ...(status ? ['r.status = $2'] : [])];
    return this.pages.page(
      { select: this.tables.registrations.select, from: 'registrations r', where, params: status ? [userId, status] : [userId] },
      USER_REGISTRATIONS,
      request,
      this.tables.registrations.map,
    );
  }

  /** A user's registrations in numbered pages, newest first (legacy REST API). */
  listOfUserNumbered(
    userId: string,
    status: RegistrationStatusValue | null,
    page: number,
    perPage: number,
  ): Promise<NumberedPage<Registration>> {
    const where = ['r.user_id = $1', ...(status ? ['r.status = $2'] : [])];
    return fetchNumberedPage(
      (sql, params) => this.dataSource.query(sql, params),
      { select: this.tables.registrations.select, from: 'registrations r', where, params: status ? [userId, status] : [userId] },
      'r.created_at DESC, r.id DESC',
      page,
      perPage,
      this.tables.registrations.map,
    );
  }

  /** An event's registrations are for its organizer's team: the one rule GraphQL and REST both apply. */
  async requireCanSeeRegistrationsOf(reader: EventsReader, event: Pick<Event, 'organizerId'>): Promise<void> {
    if (!EventsPolicy.canSeeAttendees(await reader.role(event.organizerId))) throw EventError.forbidden("see this event's registrations");
  }

  /** An event's registrations in numbered pages, oldest first, for its organizer's members. */
  async listOfEventNumbered(
    reader: EventsReader,
    eventId: string,
    status: RegistrationStatusValue | null,
    page: number,
    perPage: number,
  ): Promise<NumberedPage<Registration>> {
    const event = await this.events.findVisible(reader, eventId);
    if (!event) throw EventError.notFound('Event', 'eventId');
    await this.requireCanSeeRegistrationsOf(reader, event);
    const where = ['r.event_id = $1', ...(status ? ['r.status = $2'] : [])];
    return fetchNumberedPage(
      (sql, params) => this.dataSource.query(sql, params),
      { select: this.tables.registrations.select, from: 'registrations r', where, params: status ? [eventId, status] : [eventId] },
      'r.created_at, r.id',
      page,
      perPage,
      this.tables.registrations.map,
    );
  }

  private async takeSeats(tx: EntityManager, eventId: string, ticketTypeId: string, seats: number): Promise<void> {
    await tx.query(`UPDATE events SET confirmed_seats = confirmed_seats + $2 WHERE id = $1`, [eventId, seats]);
    await tx.query(`UPDATE ticket_types SET sold = sold + $2 WHERE id = $1`, [ticketTypeId, seats]);
  }
}

interface SeatState {
  status: string;
  ends_at: Date;
  capacity: number | null;
  confirmed_seats: number;
  quantity: number | null;
  sold: number;
  sales_start_at: Date | null;
  sales_end_at: Date | null;
}

function checkOpen(state: SeatState, now: Date): void {
  if (state.status === 'cancelled') throw new EventError('EVENT_CANCELLED', 'This event is cancelled.', 'eventId');
  if (state.status !== 'published') throw new EventError('REGISTRATION_CLOSED', 'This event is not published yet.', 'eventId');
  if (state.ends_at <= now) throw new EventError('EVENT_ENDED', 'This event has ended.', 'eventId');
  const sales = salesState({ salesStartAt: state.sales_start_at, salesEndAt: state.sales_end_at }, now);
  if (sales === 'not_started') throw new EventError('SALES_NOT_STARTED', 'Sales of this ticket type have not opened yet.', 'ticketTypeId');
  if (sales === 'ended') throw new EventError('SALES_ENDED', 'Sales of this ticket type have closed.', 'ticketTypeId');
}

function newReference(): string {
  let code = 'AG-';
  for (let i = 0; i < 8; i++) code += REFERENCE_ALPHABET[randomInt(REFERENCE_ALPHABET.length)];
  return code;
}
