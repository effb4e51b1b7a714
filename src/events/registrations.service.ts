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
import { EventError } from './events.errors.js';
import type { Attendee, Event, Registration, RegistrationStatusValue } from './events.model.js';
import { EventsPolicy } from './events.policy.js';
import type { EventsReader } from './events.reader.js';
import { EventTables } from './event-tables.js';
import { EventsService } from './events.service.js';
import { TicketTypesService } from './ticket-types.service.js';
import { salesState } from './schedule.js';
import { promoteWaitlist } from './waitlist.js';

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
        return registrations.map(row!);
      });
    } catch (err) {
      if (violatedUniqueConstraint(err) === 'registrations_one_active_per_user_idx') {
        throw new EventError('ALREADY_REGISTERED', 'You are already registered for this event; cancel that registration first.', 'eventId');
      }
      throw err;
    }
  }

  /** Cancels a registration (its registrant, or the organizer's owners and admins); freed seats go to the waitlist. */
  async cancel(reader: EventsReader, registrationId: string): Promise<Registration> {
    const registration = await this.findVisible(reader, registrationId);
    if (!registration) throw EventError.notFound('Registration', 'registrationId');
    if (registration.userId !== reader.userId) {
      await this.events.requireRole(reader, registration.eventId, EventsPolicy.canManage, 'cancel registrations for this event');
    }
    const now = this.clock.now();
    const { registrations } = this.tables;
    return reader.changeEvent(registration.eventId, async (tx) => {
      const [current] = (await tx.query(`SELECT status, ticket_type_id, quantity FROM registrations WHERE id = $1`, [registrationId])) as {
        status: RegistrationStatusValue;
        ticket_type_id: string;
        quantity: number;
      }[];
      if (current!.status === 'cancelled')
        throw new EventError('ALREADY_CANCELLED', 'This registration is already cancelled.', 'registrationId');
      const [[row]] = (await tx.query(
        `UPDATE registrations r SET status = 'cancelled', cancelled_at = $2, updated_at = $2 WHERE r.id = $1 RETURNING ${registrations.select}`,
        [registrationId, now],
      )) as [Record<string, unknown>[], number];
      if (current!.status === 'confirmed') {
        await this.takeSeats(tx, registration.eventId, current!.ticket_type_id, -current!.quantity);
        const [event] = (await tx.query(`SELECT status, ends_at FROM events WHERE id = $1`, [registration.eventId])) as {
          status: string;
          ends_at: Date;
        }[];
        if (event!.status === 'published' && event!.ends_at > now) await promoteWaitlist(tx, registration.eventId, now);
      }
      return registrations.map(row!);
    });
  }

  /** Records an attendee's arrival; any member of the organizer may do it. */
  async checkIn(reader: EventsReader, attendeeId: string): Promise<Attendee> {
    const attendee = await this.findVisibleAttendee(reader, attendeeId);
    if (!attendee) throw EventError.notFound('Attendee', 'attendeeId');
    const registration = (await reader.registrations.load(attendee.registrationId))!;
    await this.events.requireRole(reader, registration.eventId, EventsPolicy.canSeeAttendees, 'check attendees in');
    if (registration.status !== 'confirmed')
      throw new EventError('NOT_CONFIRMED', 'Only attendees of a confirmed registration can be checked in.', 'attendeeId');
    const { attendees } = this.tables;
    const [rows] = (await reader.writeEvent(registration.eventId, (db) =>
      db.query(`UPDATE attendees a SET checked_in_at = $2 WHERE a.id = $1 AND a.checked_in_at IS NULL RETURNING ${attendees.select}`, [
        attendeeId,
        this.clock.now(),
      ]),
    )) as [Record<string, unknown>[], number];
    if (!rows[0]) throw new EventError('ALREADY_CHECKED_IN', 'This attendee is already checked in.', 'attendeeId');
    return attendees.map(rows[0]);
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
