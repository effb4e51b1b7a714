import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import DataLoader from 'dataloader';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { PreparedStatements } from '../database/prepared-statements.js';
import { hasSecondFactorSql } from '../users/second-factors.js';
import { User } from '../users/user.model.js';
import { UsersService } from '../users/users.service.js';
import { EventTables } from './event-tables.js';
import { EventError } from './events.errors.js';
import { PublicListingCache } from './public-listing-cache.js';
import type { Principal } from '../auth/principal.js';
import type { Attendee, Event, Organizer, OrganizerRoleValue, Registration, TicketType } from './events.model.js';
import type { CallerRole } from './events.policy.js';

type Row = Record<string, unknown>;

/**
 * The caller's membership of an organizer, and the second factor it may be waiting for: when the
 * organizer requires one of its team and the caller has none, the time from which they may no longer act
 * for it (`secondFactorDeadline`: the requirement's start, or their joining if later, plus the grace
 * period); null otherwise.
 */
export interface Membership {
  role: CallerRole;
  secondFactorDeadline: Date | null;
}

/**
 * The reads of one request, batched and cached by DataLoader: however many events a page holds, their
 * organizers cost one statement, their ticket types one more. It also knows who is asking, and their
 * role in each organizer, which is what every access rule turns on. Never shared between requests.
 *
 * Writes go through it too (`changeEvent`, `changeOrganizer`): each runs in a transaction holding the
 * row lock of the event or organizer it changes, and the cache forgets what it read of them after,
 * so a read later in the same request sees the change without the service remembering to ask; once it
 * has committed, so does the public listing (PublicListingCache), before the change is answered.
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
  private readonly memberships: DataLoader<string, Membership | null>;
  private readonly activeRegistrations: DataLoader<string, Registration | null>;

  constructor(
    statements: PreparedStatements,
    usersService: UsersService,
    private readonly tables: EventTables,
    private readonly dataSource: DataSource,
    /** The authenticated user, or null for an anonymous caller or a service account. */
    readonly userId: string | null,
    private readonly clock: Clock,
    private readonly listings: PublicListingCache,
    /**
     * A service account's organizer: the caller acts for it, and for no other, as its `service_account`
     * member (events.policy.ts); never for a person (no user, no registrations of its own).
     */
    readonly serviceAccountOf: string | null = null,
  ) {
    const query = (sql: string, params: unknown[]): Promise<Row[]> => statements.run(sql, params);
    const { organizers: o, events: e, ticketTypes: t, registrations: r, attendees: a } = tables;
    this.organizers = byId((ids) => query(`SELECT ${o.select} FROM organizers o WHERE o.id = ANY($1)`, [ids]), o.map);
    this.events = byId((ids) => query(`SELECT ${e.select} FROM events e WHERE e.id = ANY($1)`, [ids]), e.map);
    this.ticketTypes = byId((ids) => query(`SELECT ${t.select} FROM ticket_types t WHERE t.id = ANY($1)`, [ids]), t.map);
    this.ticketTypesOfEvent = groupedBy(
      (ids) => query(`SELECT ${t.select} FROM ticket_types t WHERE t.event_id = ANY($1) ORDER BY t.created_at, t.id`, [ids]),
      t.map,
      (ticketType) => ticketType.eventId,
    );
    this.registrations = byId((ids) => query(`SELECT ${r.select} FROM registrations r WHERE r.id = ANY($1)`, [ids]), r.map);
    this.attendees = byId((ids) => query(`SELECT ${a.select} FROM attendees a WHERE a.id = ANY($1)`, [ids]), a.map);
    this.attendeesOfRegistration = groupedBy(
      (ids) => query(`SELECT ${a.select} FROM attendees a WHERE a.registration_id = ANY($1) ORDER BY a.position`, [ids]),
      a.map,
      (attendee) => attendee.registrationId,
    );
    this.users = new DataLoader(async (ids) => {
      const found = new Map((await usersService.findManyByIds(ids)).map((u) => [u.id, u]));
      return ids.map((id) => found.get(id) ?? null);
    });
    this.memberships = new DataLoader(async (organizerIds) => {
      if (this.serviceAccountOf !== null) return organizerIds.map((id) => (id === this.serviceAccountOf ? SERVICE_ACCOUNT : null));
      if (!this.userId) return organizerIds.map(() => null);
      const rows = await query(MEMBERSHIPS, [this.userId, organizerIds]);
      const found = new Map(
        rows.map((r): [string, Membership] => [
          r.organizer_id as string,
          { role: r.role as OrganizerRoleValue, secondFactorDeadline: (r.second_factor_deadline as Date | null) ?? null },
        ]),
      );
      return organizerIds.map((id) => found.get(id) ?? null);
    });
    this.activeRegistrations = new DataLoader(async (eventIds) => {
      if (!this.userId) return eventIds.map(() => null);
      const rows = await query(
        `SELECT ${r.select} FROM registrations r WHERE r.user_id = $1 AND r.event_id = ANY($2) AND r.status <> 'cancelled'`,
        [this.userId, eventIds],
      );
      const found = new Map(rows.map((row) => [row.event_id as string, r.map(row)]));
      return eventIds.map((id) => found.get(id) ?? null);
    });
  }

  /**
   * The caller's role in the organizer; null when not a member, anonymous, or a member held back by the
   * organizer's second-factor requirement (past its grace period without one): such a member sees what
   * everyone sees and acts for the organizer in nothing (`refusal` tells them why).
   */
  async role(organizerId: string): Promise<CallerRole | null> {
    const membership = await this.membership(organizerId);
    return membership && !this.heldBack(membership) ? membership.role : null;
  }

  /** The caller's membership as stored, whether or not a second-factor requirement holds it back. */
  membership(organizerId: string): Promise<Membership | null> {
    return this.userId || this.serviceAccountOf ? this.memberships.load(organizerId) : NO_MEMBERSHIP;
  }

  /** Nobody at all: no user and no service account. */
  get anonymous(): boolean {
    return this.userId === null && this.serviceAccountOf === null;
  }

  /**
   * The error for a caller refused `action` in an organizer: SECOND_FACTOR_REQUIRED (what to do, since
   * when) for a member held back by the requirement, FORBIDDEN otherwise.
   */
  async refusal(organizerId: string, action: string): Promise<EventError> {
    const membership = await this.membership(organizerId);
    if (membership && this.heldBack(membership)) return EventError.secondFactorRequired(membership.secondFactorDeadline!);
    return EventError.forbidden(action);
  }

  private heldBack(membership: Membership): boolean {
    return membership.secondFactorDeadline !== null && membership.secondFactorDeadline <= this.clock.now();
  }

  /** The caller's confirmed or waitlisted registration for the event, if any. */
  activeRegistration(eventId: string): Promise<Registration | null> {
    return this.userId ? this.activeRegistrations.load(eventId) : NO_REGISTRATION;
  }

  /**
   * What a change read or wrote of the caller's membership in an organizer (its role and second-factor
   * deadline as `secondFactorDeadlineSql` gives it; null role: not a member), so that its answer needs
   * no read after the commit.
   */
  primeMembership(organizerId: string, role: string | null, secondFactorDeadline: Date | null): void {
    if (!this.userId) return;
    this.memberships.clear(organizerId).prime(organizerId, role ? { role: role as OrganizerRoleValue, secondFactorDeadline } : null);
  }

  /** The caller's active registration for an event as a change left it (null: none), for its answer. */
  primeActiveRegistration(eventId: string, registration: Registration | null): void {
    if (!this.userId) return;
    this.activeRegistrations.clear(eventId).prime(eventId, registration);
  }

  /**
   * Runs a change to an event or the rows under it (ticket types, registrations, attendees) in a
   * transaction holding the event's row lock (every change to its seats, tickets or registrations
   * happens under it), given the event as locked, or undefined when it is gone. Afterwards, committed
   * or not, this request forgets what it read of the event and of the rows under it; once committed, so
   * does the public listing (PublicListingCache.changed), here and on the other instances.
   */
  async changeEvent<T>(eventId: string, change: (tx: EntityManager, locked: Event | undefined) => Promise<T>): Promise<T> {
    const { events } = this.tables;
    try {
      return this.committed(
        await this.dataSource.transaction(async (tx) => {
          const [row] = (await tx.query(`SELECT ${events.select} FROM events e WHERE e.id = $1 FOR UPDATE`, [eventId])) as Row[];
          return change(tx, row && events.map(row));
        }),
      );
    } finally {
      this.forgetEvent(eventId);
    }
  }

  /**
   * One statement that changes an event's row or a row under it and needs no lock: a single UPDATE or
   * DELETE whose WHERE carries the condition it depends on (`status = 'draft'`, `checked_in_at IS NULL`),
   * which PostgreSQL applies atomically. Afterwards this request forgets the event, as `changeEvent`.
   * `listed` says, from what the write returned, whether it changed anything the public listing shows
   * (an event's fields, seats or tickets sold): a registration put on the waitlist and a check-in do not,
   * so they leave the listing's pages in place here and send the other instances nothing.
   */
  async writeEvent<T>(eventId: string, write: (db: EntityManager) => Promise<T>, listed: (written: T) => boolean = () => true): Promise<T> {
    try {
      const written = await write(this.dataSource.manager);
      return listed(written) ? this.committed(written) : written;
    } finally {
      this.forgetEvent(eventId);
    }
  }

  /**
   * Runs a change to an organizer or its team in a transaction holding the organizer's row lock (so
   * two changes cannot both remove the last owner); afterwards this request forgets the organizer and
   * the caller's role in it.
   */
  async changeOrganizer<T>(organizerId: string, change: (tx: EntityManager) => Promise<T>): Promise<T> {
    try {
      return this.committed(
        await this.dataSource.transaction(async (tx) => {
          await tx.query(`SELECT 1 FROM organizers WHERE id = $1 FOR UPDATE`, [organizerId]);
          return change(tx);
        }),
      );
    } finally {
      this.forgetOrganizer(organizerId);
    }
  }

  /**
   * One statement that changes an organizer or its team and needs no lock (an UPDATE of its row, adding
   * a member, whose key refuses a duplicate); afterwards this request forgets the organizer and the roles.
   */
  async writeOrganizer<T>(organizerId: string, write: (db: EntityManager) => Promise<T>): Promise<T> {
    try {
      return this.committed(await write(this.dataSource.manager));
    } finally {
      this.forgetOrganizer(organizerId);
    }
  }

  /**
   * A write has committed (a failed one, rolled back, changed nothing anyone could have listed): the
   * public listing forgets its pages here and on the other instances, before the change is answered.
   */
  private committed<T>(result: T): T {
    this.listings.changed();
    return result;
  }

  private forgetEvent(eventId: string): void {
    this.events.clear(eventId);
    this.ticketTypesOfEvent.clear(eventId);
    this.activeRegistrations.clear(eventId);
    // Keyed by their own ids: which of them belong to the event is not known without reading them.
    this.ticketTypes.clearAll();
    this.registrations.clearAll();
    this.attendees.clearAll();
    this.attendeesOfRegistration.clearAll();
  }

  private forgetOrganizer(organizerId: string): void {
    this.organizers.clear(organizerId);
    this.memberships.clear(organizerId);
  }
}

// What an anonymous caller has in every organizer and event: one settled promise, not one per field.
const NO_MEMBERSHIP: Promise<Membership | null> = Promise.resolve(null);
// A service account in its own organizer: never held back by a second-factor requirement (it is no person).
const SERVICE_ACCOUNT: Membership = { role: 'service_account', secondFactorDeadline: null };

/**
 * The second-factor deadline of member `m` (of `organizer_members`) in organizer `o`, whose user is `u`:
 * null when nothing is required or the member has a second factor; else the requirement's start, or
 * the member's joining if later, plus the grace period. For statements that read a membership with
 * other rows (the registration's reads), the same rule as the memberships loader's.
 */
export function secondFactorDeadlineSql(o: string, m: string, u: string): string {
  return `CASE WHEN ${o}.second_factor_required_since IS NULL OR ${hasSecondFactorSql(u)} THEN NULL
              ELSE GREATEST(${o}.second_factor_required_since, ${m}.created_at) + ${o}.second_factor_grace_hours * interval '1 hour'
         END`;
}

// $1 user, $2 organizer ids.
const MEMBERSHIPS = `
  SELECT m.organizer_id, m.role, ${secondFactorDeadlineSql('o', 'm', 'u')} AS second_factor_deadline
    FROM organizer_members m
    JOIN organizers o ON o.id = m.organizer_id
    JOIN users u ON u.id = m.user_id
   WHERE m.user_id = $1 AND m.organizer_id = ANY($2)`;
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
    private readonly tables: EventTables,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly listings: PublicListingCache,
  ) {}

  create(userId: string | null, serviceAccountOf: string | null = null): EventsReader {
    return new EventsReader(this.statements, this.users, this.tables, this.dataSource, userId, this.clock, this.listings, serviceAccountOf);
  }

  /** The reader of a request's caller: a user, a service account (its organizer), or anonymous (null). */
  forPrincipal(principal: Principal | null | undefined): EventsReader {
    return this.create(principal?.user?.id ?? null, principal?.serviceAccount?.organizerId ?? null);
  }
}
