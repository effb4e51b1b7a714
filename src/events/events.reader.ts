import { Injectable } from '@nestjs/common';
import DataLoader from 'dataloader';
import { PreparedStatements } from '../database/prepared-statements.js';
import { User } from '../users/user.model.js';
import { UsersService } from '../users/users.service.js';
import type { Attendee, Event, Organizer, OrganizerRoleValue, Registration, TicketType } from './events.model.js';
import {
  ATTENDEE_COLUMNS,
  EVENT_COLUMNS,
  ORGANIZER_COLUMNS,
  REGISTRATION_COLUMNS,
  TICKET_TYPE_COLUMNS,
  toAttendee,
  toEvent,
  toOrganizer,
  toRegistration,
  toTicketType,
} from './events.rows.js';

type Row = Record<string, unknown>;

/**
 * The reads of one request, batched and cached by DataLoader: however many events a page holds, their
 * organizers cost one statement, their ticket types one more. It also knows who is asking, and their
 * role in each organizer, which is what every access rule turns on. Never shared between requests.
 */
export class EventsReader {
  readonly organizers: DataLoader<string, Organizer | null>;
  readonly events: DataLoader<string, Event | null>;
  readonly ticketTypes: DataLoader<string, TicketType | null>;
  readonly ticketTypesOfEvent: DataLoader<string, TicketType[]>;
  readonly registrations: DataLoader<string, Registration | null>;
  readonly attendees: DataLoader<string, Attendee | null>;
  readonly attendeesOfRegistration: DataLoader<string, Attendee[]>;
  readonly users: DataLoader<string, User | null>;
  private readonly roles: DataLoader<string, OrganizerRoleValue | null>;
  private readonly activeRegistrations: DataLoader<string, Registration | null>;

  constructor(
    statements: PreparedStatements,
    usersService: UsersService,
    /** The authenticated user, or null for an anonymous caller. */
    readonly userId: string | null,
  ) {
    const query = (sql: string, params: unknown[]): Promise<Row[]> => statements.run(sql, params);
    this.organizers = byId((ids) => query(`SELECT ${ORGANIZER_COLUMNS} FROM organizers o WHERE o.id = ANY($1)`, [ids]), toOrganizer);
    this.events = byId((ids) => query(`SELECT ${EVENT_COLUMNS} FROM events e WHERE e.id = ANY($1)`, [ids]), toEvent);
    this.ticketTypes = byId((ids) => query(`SELECT ${TICKET_TYPE_COLUMNS} FROM ticket_types t WHERE t.id = ANY($1)`, [ids]), toTicketType);
    this.ticketTypesOfEvent = groupedBy(
      (ids) => query(`SELECT ${TICKET_TYPE_COLUMNS} FROM ticket_types t WHERE t.event_id = ANY($1) ORDER BY t.created_at, t.id`, [ids]),
      toTicketType,
      (t) => t.eventId,
    );
    this.registrations = byId(
      (ids) => query(`SELECT ${REGISTRATION_COLUMNS} FROM registrations r WHERE r.id = ANY($1)`, [ids]),
      toRegistration,
    );
    this.attendees = byId((ids) => query(`SELECT ${ATTENDEE_COLUMNS} FROM attendees a WHERE a.id = ANY($1)`, [ids]), toAttendee);
    this.attendeesOfRegistration = groupedBy(
      (ids) => query(`SELECT ${ATTENDEE_COLUMNS} FROM attendees a WHERE a.registration_id = ANY($1) ORDER BY a.position`, [ids]),
      toAttendee,
      (a) => a.registrationId,
    );
    this.users = new DataLoader(async (ids) => {
      const found = new Map((await usersService.findManyByIds(ids)).map((u) => [u.id, u]));
      return ids.map((id) => found.get(id) ?? null);
    });
    this.roles = new DataLoader(async (organizerIds) => {
      if (!this.userId) return organizerIds.map(() => null);
      const rows = await query(`SELECT organizer_id, role FROM organizer_members WHERE user_id = $1 AND organizer_id = ANY($2)`, [
        this.userId,
        organizerIds,
      ]);
      const found = new Map(rows.map((r) => [r.organizer_id as string, r.role as OrganizerRoleValue]));
      return organizerIds.map((id) => found.get(id) ?? null);
    });
    this.activeRegistrations = new DataLoader(async (eventIds) => {
      if (!this.userId) return eventIds.map(() => null);
      const rows = await query(
        `SELECT ${REGISTRATION_COLUMNS} FROM registrations r WHERE r.user_id = $1 AND r.event_id = ANY($2) AND r.status <> 'cancelled'`,
        [this.userId, eventIds],
      );
      const found = new Map(rows.map((r) => [r.event_id as string, toRegistration(r)]));
      return eventIds.map((id) => found.get(id) ?? null);
    });
  }

  /** The caller's role in the organizer; null when not a member or anonymous. */
  role(organizerId: string): Promise<OrganizerRoleValue | null> {
    return this.userId ? this.roles.load(organizerId) : NO_ROLE;
  }

  /** The caller's confirmed or waitlisted registration for the event, if any. */
  activeRegistration(eventId: string): Promise<Registration | null> {
    return this.userId ? this.activeRegistrations.load(eventId) : NO_REGISTRATION;
  }

  /** Forgets what this request read of an event, after the request changed it. */
  forgetEvent(eventId: string): void {
    this.events.clear(eventId);
    this.ticketTypesOfEvent.clear(eventId);
    this.activeRegistrations.clear(eventId);
  }

  forgetOrganizer(organizerId: string): void {
    this.organizers.clear(organizerId);
    this.roles.clear(organizerId);
  }
}

// What an anonymous caller has in every organizer and event: one settled promise, not one per field.
const NO_ROLE: Promise<OrganizerRoleValue | null> = Promise.resolve(null);
const NO_REGISTRATION: Promise<Registration | null> = Promise.resolve(null);

function byId<T extends { id: string }>(
  load: (ids: readonly string[]) => Promise<Row[]>,
  map: (row: Row) => T,
): DataLoader<string, T | null> {
  return new DataLoader(async (ids) => {
    const found = new Map((await load(ids)).map((row) => [row.id as string, map(row)]));
    return ids.map((id) => found.get(id) ?? null);
  });
}

function groupedBy<T>(
  load: (ids: readonly string[]) => Promise<Row[]>,
  map: (row: Row) => T,
  keyOf: (item: T) => string,
): DataLoader<string, T[]> {
  return new DataLoader(async (ids) => {
    const groups = new Map<string, T[]>(ids.map((id) => [id, []]));
    for (const row of await load(ids)) {
      const item = map(row);
      groups.get(keyOf(item))?.push(item);
    }
    return ids.map((id) => groups.get(id)!);
  });
}

/** Makes the reader of each request. */
@Injectable()
export class EventsReaderFactory {
  constructor(
    private readonly statements: PreparedStatements,
    private readonly users: UsersService,
  ) {}

  create(userId: string | null): EventsReader {
    return new EventsReader(this.statements, this.users, userId);
  }
}
