import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomInt, randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../clock/clock.js';
import type { EntityTable } from '../database/entity-table.js';
import type { Page, PageRequest, SortKey } from '../database/keyset.js';
import { KeysetPager } from '../database/keyset-pager.js';
import { fetchNumberedPage, NumberedPage } from '../database/offset-page.js';
import { PreparedStatements, Statement } from '../database/prepared-statements.js';
import { violatedUniqueConstraint } from '../database/postgres-errors.js';
import { AttendeeInput, checkAttendees } from './event-validation.js';
import { EventNotices, RegistrationNotice } from './event-notices.js';
import { ClaimRow, ClaimStatement, claimStatement } from './registration-claim.js';
import { EventError } from './events.errors.js';
import type { Attendee, CancelledByValue, Event, Registration, RegistrationStatusValue, TicketType } from './events.model.js';
import { EventsPolicy } from './events.policy.js';
import { secondFactorDeadlineSql, type EventsReader } from './events.reader.js';
import { EventTables } from './event-tables.js';
import { EventsService } from './events.service.js';
import { TicketTypesService } from './ticket-types.service.js';
import { salesState } from './schedule.js';
import { TicketCodes } from './ticket-codes.js';
import { PromotedRegistration, Waitlist } from './waitlist.js';
import { attendeeEvent, registrationEvent } from './webhook-events.js';
import { WebhookFanOut, WebhookOutbox } from './webhook-outbox.js';
import type { User } from '../users/user.model.js';
import { UsersService } from '../users/users.service.js';

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

/** A check-in changes nothing the public listing shows (EventsReader.writeEvent). */
const NOTHING_LISTED = (): boolean => false;

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
    private readonly outbox: WebhookOutbox,
    private readonly statements: PreparedStatements,
    private readonly users: UsersService,
    private readonly waitlist: Waitlist,
  ) {
    this.cancelling = tables.registrations.pick('status', 'ticketTypeId', 'quantity');
    this.eventState = tables.events.pick('status', 'endsAt');
  }

  /** What a cancellation reads of the registration it locks, and of its event after giving back the seats. */
  private readonly cancelling: EntityTable<Pick<Registration, 'status' | 'ticketTypeId' | 'quantity'>, Registration>;
  private readonly eventState: EntityTable<Pick<Event, 'status' | 'endsAt'>, Event>;

  /** The registration's statement, made once (its jobs' SQL comes from pg-boss). */
  private claimStatement?: Promise<ClaimStatement>;

  /**
   * Registers the caller. Emits `registration.created` and then `registration.confirmed` or
   * `registration.waitlisted`, in the registration's transaction (nothing when it rolls back).
   */
  async register(reader: EventsReader, input: RegistrationInput): Promise<Registration> {
    const userId = reader.userId;
    if (!userId) throw EventError.forbidden('register without signing in');
    // Every check that needs no lock comes first: the event's row is locked for one statement only.
    const { event, ticketType } = await this.visibleToRegister(reader, input);
    const attendees = checkAttendees(input.attendees, ticketType);
    const quantity = attendees.length;
    const now = this.clock.now();
    checkOpen(event, ticketType, now);
    // The event's ticket types as read with it (primed by visibleToRegister), for the answer after the claim.
    const ticketTypesOfEvent = await reader.ticketTypesOfEvent.load(event.id);

    const claim = await (this.claimStatement ??= claimStatement(this.tables, this.outbox, this.notices));
    const registrationId = randomUUID();
    const attendeeIds = attendees.map(() => randomUUID());
    const facts = { id: registrationId, eventId: event.id, userId };
    const told = (status: 'registration.confirmed' | 'registration.waitlisted') => ({
      fanOut: JSON.stringify({
        events: [
          registrationEvent('registration.created', now, event.organizerId, facts),
          registrationEvent(status, now, event.organizerId, facts),
        ],
      } satisfies WebhookFanOut),
      notice: JSON.stringify({ message: status, registrationId } satisfies RegistrationNotice),
    });
    const [confirmed, waitlisted] = [told('registration.confirmed'), told('registration.waitlisted')];
    const values: unknown[] = [
      event.id,
      ticketType.id,
      registrationId,
      userId,
      newReference(),
      quantity,
      now,
      attendeeIds,
      attendees.map((a) => a.name),
      attendees.map((a) => a.email),
      confirmed.fanOut,
      waitlisted.fanOut,
      ...(claim.mail ? [confirmed.notice, waitlisted.notice] : []),
      ...claim.jobValues,
    ];

    // One statement, its own transaction (no BEGIN, no COMMIT from here): the lock it takes ends with it,
    // inside PostgreSQL, never waiting on this process.
    let row: ClaimRow | undefined;
    try {
      // Only a confirmed registration moves the seats and tickets the public listing shows.
      [row] = await reader.writeEvent(
        event.id,
        () => this.statements.query<ClaimRow>(claim, values),
        ([written]) => written?.status === 'confirmed',
      );
    } catch (err) {
      if (violatedUnique(err) === 'registrations_one_active_per_user_idx') {
        throw new EventError('ALREADY_REGISTERED', 'You are already registered for this event; cancel that registration first.', 'eventId');
      }
      throw err;
    }
    if (!row) throw EventError.notFound('TicketType', 'ticketTypeId');
    // The event's and the ticket type's rows as the statement locked them.
    const lockedEvent = claim.locked.event.mapAs(row);
    const lockedTicketType = claim.locked.ticketType.mapAs(row);
    if (row.id == null) {
      // Nothing written: closed (the precise reason).
      checkOpen(lockedEvent, lockedTicketType, now);
      throw new Error('registration not written for an event open to registrations');
    }

    // The answer is built from what the transaction wrote and decided: once it has committed, the
    // payload's fields (attendees, ticket type, event) must not need the database again.
    const registration = this.tables.registrations.map(row);
    const seats = row.fits ? quantity : 0;
    reader.registrations.prime(registration.id, registration);
    const written = attendees.map((a, i): Attendee => ({
      id: attendeeIds[i]!,
      registrationId,
      name: a.name,
      email: a.email,
      position: i + 1,
      checkedInAt: null,
      createdAt: now,
    }));
    reader.attendeesOfRegistration.prime(registrationId, written);
    for (const attendee of written) reader.attendees.prime(attendee.id, attendee);
    // The rows as locked (their seats and sales as the statement saw them, plus its own).
    const claimed: TicketType = { ...ticketType, ...lockedTicketType, sold: lockedTicketType.sold + seats };
    reader.ticketTypes.prime(ticketType.id, claimed);
    // The event's other ticket types as read before the claim.
    reader.ticketTypesOfEvent.prime(
      event.id,
      ticketTypesOfEvent.map((t) => (t.id === claimed.id ? claimed : t)),
    );
    for (const t of ticketTypesOfEvent) if (t.id !== claimed.id) reader.ticketTypes.prime(t.id, t);
    reader.events.prime(event.id, {
      ...event,
      capacity: lockedEvent.capacity,
      confirmedSeats: lockedEvent.confirmedSeats + seats,
      endsAt: lockedEvent.endsAt,
    });
    // The caller's one active registration for the event is this one (one per user and event, an index holds it).
    reader.primeActiveRegistration(event.id, registration);
    return registration;
  }

  /**
   * The event and the ticket type to register for, as the caller sees them (EventsService.findVisible,
   * TicketTypesService.findVisible). Both are read at once; the caller's role in the organizer is read
   * only when it matters: a published event that is not private, and a ticket type that is not hidden,
   * are seen by everyone, whatever their role (EventsPolicy.canView), the common case of a ticket rush.
   */
  private async visibleToRegister(reader: EventsReader, input: RegistrationInput): Promise<{ event: Event; ticketType: TicketType }> {
    const [read, readTicketType] = await this.eventAndTicketType(reader, input);
    const forEveryone =
      read && EventsPolicy.canView(read, null) && readTicketType && readTicketType.eventId === read.id && !readTicketType.hidden;
    const event = forEveryone ? read : await this.events.findVisible(reader, input.eventId);
    if (!event) throw EventError.notFound('Event', 'eventId');
    const ticketType = forEveryone ? readTicketType : await this.ticketTypes.findVisible(reader, input.ticketTypeId);
    if (!ticketType || ticketType.eventId !== event.id) throw EventError.notFound('TicketType', 'ticketTypeId');
    return { event, ticketType };
  }

  /**
   * The event, its organizer and its ticket types in one statement (the ticket type asked for among them:
   * one of another event reads as neither, and the loaders then tell which is missing), primed into the
   * request's loaders: the answer's `event { organizer ticketTypes }` need no read after the claim.
   */
  private async eventAndTicketType(reader: EventsReader, input: RegistrationInput): Promise<[Event | null, TicketType | null]> {
    const { events, ticketTypes, organizers } = this.tables;
    this.eventAndTicketTypeStatement ??= {
      name: 'registration-event-and-ticket-types',
      // With the caller's membership in the organizer ($2), which the answer's `event { onlineUrl
      // ticketTypes }` and a private event's visibility depend on.
      text: `SELECT ${events.select}, ${ticketTypes.selectAs()}, ${organizers.selectAs()},
                    m.role AS "m.role", ${secondFactorDeadlineSql('o', 'm', 'mu')} AS "m.deadline"
               FROM events e JOIN organizers o ON o.id = e.organizer_id JOIN ticket_types t ON t.event_id = e.id
               LEFT JOIN organizer_members m ON m.organizer_id = o.id AND m.user_id = $2::uuid
               LEFT JOIN users mu ON mu.id = m.user_id
              WHERE e.id = $1 ORDER BY t.created_at, t.id`,
    };
    const rows = await this.statements.query(this.eventAndTicketTypeStatement, [input.eventId, reader.userId]);
    const all = rows.map((row) => ticketTypes.mapAs(row));
    const ticketType = all.find((t) => t.id === input.ticketTypeId);
    if (!ticketType) return Promise.all([reader.events.load(input.eventId), reader.ticketTypes.load(input.ticketTypeId)]);
    const event = events.map(rows[0]!);
    const organizer = organizers.mapAs(rows[0]!);
    reader.events.prime(event.id, event);
    reader.organizers.prime(organizer.id, organizer);
    reader.primeMembership(organizer.id, (rows[0]!['m.role'] as string | null) ?? null, (rows[0]!['m.deadline'] as Date | null) ?? null);
    for (const t of all) reader.ticketTypes.prime(t.id, t);
    reader.ticketTypesOfEvent.prime(event.id, all);
    return [event, ticketType];
  }

  private eventAndTicketTypeStatement?: Statement;

  /** The registrant's columns (users, joined as `ru`), for `registrantOf`. */
  private registrantColumns(): string {
    return this.users.selectAs('ru');
  }

  /** The registrant as the users loader gives a user, from a row holding `registrantColumns`. */
  private registrantOf(row: Record<string, unknown>): User | null {
    return row['ru.id'] == null ? null : this.users.fromRow(row, 'ru');
  }

  /**
   * Cancels a registration; freed seats go to the waitlist. Its registrant may, until one of its
   * attendees has checked in (CHECKED_IN: a ticket used at the door is not given back); the organizer's
   * owners and admins always may (a mistaken check-in, someone sent away). Recorded in `cancelled_by`.
   * Emits `registration.cancelled`, and `registration.promoted` for each registration the freed seats
   * confirmed, in one transaction.
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
    const cancelled = await reader.changeEvent(registration.eventId, async (tx, locked) => {
      // The row lock orders this after a check-in in flight (which holds the row FOR SHARE), so the
      // UPDATE below, a statement of its own, sees that check-in.
      const [currentRow] = (await tx.query(`SELECT ${this.cancelling.select} FROM registrations r WHERE r.id = $1 FOR UPDATE`, [
        registrationId,
      ])) as Record<string, unknown>[];
      const current = this.cancelling.map(currentRow!);
      if (current.status === 'cancelled')
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
      let promoted: PromotedRegistration[] = [];
      if (current.status === 'confirmed') {
        await this.takeSeats(tx, registration.eventId, current.ticketTypeId, -current.quantity);
        const [eventRow] = (await tx.query(`SELECT ${this.eventState.select} FROM events e WHERE e.id = $1`, [
          registration.eventId,
        ])) as Record<string, unknown>[];
        const event = this.eventState.map(eventRow!);
        if (event.status === 'published' && event.endsAt > now) promoted = await this.waitlist.promote(tx, registration.eventId, now);
      }
      await this.notices.registration(tx, { message: 'registration.cancelled', registrationId, by });
      const organizerId = locked!.organizerId;
      await this.outbox.emit(tx, [
        registrationEvent('registration.cancelled', now, organizerId, registration),
        ...promoted.map((p) => registrationEvent('registration.promoted', now, organizerId, { ...p, eventId: registration.eventId })),
      ]);
      // What the answer shows of the registration, read while the change still holds its locks: its
      // attendees and ticket type (seats given back, others taken), the event's seats as they end up, its organizer.
      // With the event's other ticket types, and the caller's membership in the organizer and active
      // registration for the event (the answer's `event { onlineUrl ticketTypes viewerRegistration }`).
      const { ticketTypes, organizers } = this.tables;
      const [held, ofEvent] = (await Promise.all([
        tx.query(`SELECT ${this.tables.attendees.select} FROM attendees a WHERE a.registration_id = $1 ORDER BY a.position`, [
          registrationId,
        ]),
        tx.query(
          `SELECT ${ticketTypes.select}, ${organizers.selectAs()}, ${registrations.selectAs('vr')}, ${this.registrantColumns()},
                  m.role AS "m.role", ${secondFactorDeadlineSql('o', 'm', 'mu')} AS "m.deadline"
             FROM ticket_types t JOIN organizers o ON o.id = $1 LEFT JOIN users ru ON ru.id = $4::uuid
             LEFT JOIN organizer_members m ON m.organizer_id = o.id AND m.user_id = $3::uuid
             LEFT JOIN users mu ON mu.id = m.user_id
             LEFT JOIN registrations vr ON vr.user_id = $3::uuid AND vr.event_id = $2 AND vr.status <> 'cancelled'
            WHERE t.event_id = $2 ORDER BY t.created_at, t.id`,
          [locked!.organizerId, registration.eventId, reader.userId, registration.userId],
        ),
      ])) as [Record<string, unknown>[], Record<string, unknown>[]];
      const first = ofEvent[0]!;
      const organizer = organizers.mapAs(first);
      const viewerRegistration = first['vr.id'] == null ? null : registrations.mapAs(first, 'vr');
      const membership = { role: (first['m.role'] as string | null) ?? null, deadline: (first['m.deadline'] as Date | null) ?? null };
      const freed = current.status === 'confirmed' ? current.quantity : 0;
      const taken = promoted.reduce((sum, p) => sum + p.quantity, 0);
      const event = { ...locked!, confirmedSeats: locked!.confirmedSeats - freed + taken };
      const registrant = this.registrantOf(first);
      return { row: row!, held, ofEvent, event, organizer, viewerRegistration, membership, registrant };
    });
    const answer = registrations.map(cancelled.row);
    reader.registrations.prime(answer.id, answer);
    const held = cancelled.held.map(this.tables.attendees.map);
    reader.attendeesOfRegistration.prime(answer.id, held);
    for (const attendee of held) reader.attendees.prime(attendee.id, attendee);
    const ofEvent = cancelled.ofEvent.map(this.tables.ticketTypes.map);
    for (const t of ofEvent) reader.ticketTypes.prime(t.id, t);
    reader.ticketTypesOfEvent.prime(cancelled.event.id, ofEvent);
    reader.events.prime(cancelled.event.id, cancelled.event);
    const { organizer } = cancelled;
    reader.organizers.prime(organizer.id, organizer);
    reader.primeMembership(organizer.id, cancelled.membership.role, cancelled.membership.deadline);
    if (cancelled.registrant) reader.users.prime(cancelled.registrant.id, cancelled.registrant);
    reader.primeActiveRegistration(cancelled.event.id, cancelled.viewerRegistration);
    return answer;
  }

  /**
   * Records an attendee's arrival, found by id or by the code of their ticket (`TicketCodes`); any
   * member of the organizer may do it. Idempotent: a second scan answers the first check-in's time with
   * `alreadyCheckedIn`. With `eventId` (the event a door admits people to), a ticket for another event
   * is refused (WRONG_EVENT). Emits `attendee.checked_in` for the first check-in only, with it.
   */
  async checkIn(reader: EventsReader, target: CheckInTarget): Promise<CheckIn> {
    const attendeeId = await this.attendeeToCheckIn(reader, target);
    const attendee = await this.findVisibleAttendee(reader, attendeeId);
    if (!attendee) throw EventError.notFound('Attendee', 'attendeeId');
    const registration = (await reader.registrations.load(attendee.registrationId))!;
    if (target.eventId && target.eventId !== registration.eventId)
      throw new EventError('WRONG_EVENT', 'This ticket is for another event.', target.code ? 'code' : 'attendeeId');
    const event = await this.events.requireRole(reader, registration.eventId, EventsPolicy.canSeeAttendees, 'check attendees in');
    const notConfirmed = () =>
      new EventError('NOT_CONFIRMED', 'Only attendees of a confirmed registration can be checked in.', target.code ? 'code' : 'attendeeId');
    if (registration.status !== 'confirmed') throw notConfirmed();
    const { attendees } = this.tables;
    const now = this.clock.now();
    // One statement, in a transaction only so that its domain event commits with it (no lock beyond the row's).
    // FOR SHARE: a cancellation of the registration waits for this check-in, or this one for it.
    const checkedIn = await reader.writeEvent(
      registration.eventId,
      (db) =>
        db.transaction(async (tx) => {
          const [rows] = (await tx.query(
            `WITH r AS (SELECT id FROM registrations WHERE id = $3 AND status = 'confirmed' FOR SHARE)
           UPDATE attendees a SET checked_in_at = $2 FROM r WHERE a.id = $1 AND a.registration_id = r.id AND a.checked_in_at IS NULL
           RETURNING ${attendees.select}`,
            [attendeeId, now, registration.id],
          )) as [Record<string, unknown>[], number];
          if (rows[0]) await this.outbox.emit(tx, [attendeeEvent('attendee.checked_in', now, event.organizerId, registration, attendeeId)]);
          return rows;
        }),
      NOTHING_LISTED,
    );
    if (checkedIn[0]) {
      const answer = attendees.map(checkedIn[0]);
      // The answer's attendee, registration and event as this request knew them: none is read again after the write.
      rememberCheckIn(reader, answer, registration, event);
      return { attendee: answer, alreadyCheckedIn: false };
    }
    const [earlier] = (await this.dataSource.query(
      `SELECT ${attendees.select}, r.status AS registration_status FROM attendees a JOIN registrations r ON r.id = a.registration_id WHERE a.id = $1`,
      [attendeeId],
    )) as Record<string, unknown>[];
    if (earlier?.registration_status !== 'confirmed' || !earlier.checked_in_at) throw notConfirmed();
    const answer = attendees.map(earlier);
    rememberCheckIn(reader, answer, registration, event);
    return { attendee: answer, alreadyCheckedIn: true };
  }

  /**
   * Undoes an attendee's check-in (a mistaken scan, someone who left): any member of the organizer, as
   * checking in. Idempotent: an attendee who is not checked in is answered as they are. Emits
   * `attendee.check_in_undone` only when a check-in was undone, with it.
   */
  async undoCheckIn(reader: EventsReader, attendeeId: string): Promise<Attendee> {
    const attendee = await this.findVisibleAttendee(reader, attendeeId);
    if (!attendee) throw EventError.notFound('Attendee', 'attendeeId');
    const registration = (await reader.registrations.load(attendee.registrationId))!;
    const event = await this.events.requireRole(reader, registration.eventId, EventsPolicy.canSeeAttendees, 'undo check-ins');
    const { attendees } = this.tables;
    const now = this.clock.now();
    const undone = await reader.writeEvent(
      registration.eventId,
      (db) =>
        db.transaction(async (tx) => {
          const [rows] = (await tx.query(
            `UPDATE attendees a SET checked_in_at = NULL WHERE a.id = $1 AND a.checked_in_at IS NOT NULL RETURNING ${attendees.select}`,
            [attendeeId],
          )) as [Record<string, unknown>[], number];
          if (rows[0])
            await this.outbox.emit(tx, [attendeeEvent('attendee.check_in_undone', now, event.organizerId, registration, attendeeId)]);
          return rows[0];
        }),
      NOTHING_LISTED,
    );
    if (undone) {
      const answer = attendees.map(undone);
      rememberCheckIn(reader, answer, registration, event);
      return answer;
    }
    const [current] = (await this.dataSource.query(`SELECT ${attendees.select} FROM attendees a WHERE a.id = $1`, [attendeeId])) as Record<
      string,
      unknown
    >[];
    if (!current) throw EventError.notFound('Attendee', 'attendeeId');
    const answer = attendees.map(current);
    rememberCheckIn(reader, answer, registration, event);
    return answer;
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
    if (event && !EventsPolicy.canSeeAttendees(role) && (await reader.membership(event.organizerId)))
      throw await reader.refusal(event.organizerId, 'check attendees in');
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
    if (!registration || reader.anonymous) return null;
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
    if (!EventsPolicy.canSeeAttendees(await reader.role(event.organizerId)))
      throw await reader.refusal(event.organizerId, "see this event's registrations");
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

/**
 * After a check-in or its undoing, the answer's attendee, its registration and its event as the request
 * knew them (the write changed only the attendee; the reader forgot all three): the payload's fields
 * (`registration`, `ticketCode`) need no read after the write, which could fail once it is done.
 */
function rememberCheckIn(reader: EventsReader, attendee: Attendee, registration: Registration, event: Event): void {
  reader.attendees.prime(attendee.id, attendee);
  reader.registrations.prime(registration.id, registration);
  reader.events.prime(event.id, event);
}

/** Whether a registration may be made, as the event and the ticket type say (as read, or as their locked rows say). */
function checkOpen(event: Pick<Event, 'status' | 'endsAt'>, ticketType: Pick<TicketType, 'salesStartAt' | 'salesEndAt'>, now: Date): void {
  const status = event.status;
  if (status === 'cancelled') throw new EventError('EVENT_CANCELLED', 'This event is cancelled.', 'eventId');
  if (status !== 'published') throw new EventError('REGISTRATION_CLOSED', 'This event is not published yet.', 'eventId');
  if (event.endsAt <= now) throw new EventError('EVENT_ENDED', 'This event has ended.', 'eventId');
  const sales = salesState(ticketType, now);
  if (sales === 'not_started') throw new EventError('SALES_NOT_STARTED', 'Sales of this ticket type have not opened yet.', 'ticketTypeId');
  if (sales === 'ended') throw new EventError('SALES_ENDED', 'Sales of this ticket type have closed.', 'ticketTypeId');
}

/** The constraint a statement violated as a unique violation, whether it ran through TypeORM or on the connection itself. */
function violatedUnique(err: unknown): string | undefined {
  const raw = err as { code?: unknown; constraint?: unknown } | null;
  if (raw && typeof raw === 'object' && !('driverError' in raw) && raw.code === '23505' && typeof raw.constraint === 'string')
    return raw.constraint;
  return violatedUniqueConstraint(err);
}

function newReference(): string {
  let code = 'AG-';
  for (let i = 0; i < 8; i++) code += REFERENCE_ALPHABET[randomInt(REFERENCE_ALPHABET.length)];
  return code;
}
