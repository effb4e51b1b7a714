import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { isUuid } from '../database/uuid.js';
import { DataSource } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { Assignments } from '../database/assignments.js';
import type { Page, PageRequest, PageSource, SortKey } from '../database/keyset.js';
import { KeysetPager } from '../database/keyset-pager.js';
import { fetchNumberedPage, NumberedPage } from '../database/offset-page.js';
import { violatedUniqueConstraint } from '../database/postgres-errors.js';
import {
  checkPositiveInt,
  checkSlug,
  checkDescription,
  checkTitle,
  ifGiven,
  checkTimeRange,
  checkTimeZone,
  checkUrl,
  checkVenue,
  missingForPublication,
  slugify,
  VenueInput,
} from './event-validation.js';
import { changesBetween, EventNotices, toldValues } from './event-notices.js';
import { EventError } from './events.errors.js';
import type { Event, EventFormatValue, EventVisibilityValue } from './events.model.js';
import { CallerRole, EventsPolicy } from './events.policy.js';
import type { EventsReader } from './events.reader.js';
import { EventTables } from './event-tables.js';
import { OrganizersService } from './organizers.service.js';
import { checkAll } from '../errors/domain-error.js';
import { eventPhase, EventPhaseValue } from './schedule.js';
import { Waitlist } from './waitlist.js';
import { eventEvent, registrationEvent } from './webhook-events.js';
import { WebhookOutbox } from './webhook-outbox.js';

export interface EventInput {
  organizerId: string;
  title: string;
  slug?: string | null;
  description?: string | null;
  startsAt: Date;
  endsAt: Date;
  timeZone: string;
  format: EventFormatValue;
  venue?: VenueInput | null;
  onlineUrl?: string | null;
  capacity?: number | null;
  visibility?: EventVisibilityValue | null;
}

/** Fields to change; null or omitted keeps the current value. */
export type EventChanges = { [K in Exclude<keyof EventInput, 'organizerId'>]?: EventInput[K] | null };

export interface EventFilter {
  startsAfter?: Date | null;
  startsBefore?: Date | null;
  organizerSlug?: string | null;
  search?: string | null;
}

export type OrderDirection = 'ASC' | 'DESC';

export interface EventList {
  page: Page<Event>;
  /** Counts the whole filtered list; a separate statement, run only when asked. */
  totalCount: () => Promise<number>;
}

/** Events by start time, for the public listing or an organizer's: a cursor of one does not open on the other. */
export const byStart = (list: 'Query.events' | 'Organizer.events', direction: OrderDirection): SortKey => ({
  list,
  columns: [
    { sql: 'e.starts_at', type: 'timestamptz' },
    { sql: 'e.id', type: 'uuid' },
  ],
  direction,
});

/** Events: their lifecycle (draft → published → cancelled), who sees them, and the public listing. */
@Injectable()
export class EventsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly organizers: OrganizersService,
    private readonly clock: Clock,
    private readonly pages: KeysetPager,
    private readonly tables: EventTables,
    private readonly notices: EventNotices,
    private readonly outbox: WebhookOutbox,
    private readonly waitlist: Waitlist,
  ) {}

  async create(reader: EventsReader, input: EventInput): Promise<Event> {
    await this.organizers.requireRole(reader, input.organizerId, EventsPolicy.canManage, 'create events for this organizer');
    const values = checkAll({
      title: () => checkTitle(input.title),
      slug: () => (input.slug ? checkSlug(input.slug.trim().toLowerCase(), 100) : null),
      timeRange: () => checkTimeRange(input.startsAt, input.endsAt),
      description: () => checkDescription(input.description ?? '', 20000),
      timeZone: () => checkTimeZone(input.timeZone),
      venue: () => (input.venue ? checkVenue(input.venue) : null),
      onlineUrl: () => (input.onlineUrl ? checkUrl(input.onlineUrl, 'onlineUrl', { httpsOnly: true }) : null),
      capacity: () => (input.capacity == null ? null : checkPositiveInt(input.capacity, 'capacity', 'INVALID_CAPACITY', 'Capacity')),
    });
    const { title } = values;
    const slug = values.slug ?? `${slugify(title, 80)}-${randomBytes(4).toString('hex')}`;
    const now = this.clock.now();
    try {
      const rows = (await this.dataSource.query(
        `INSERT INTO events AS e (organizer_id, slug, title, description, starts_at, ends_at, time_zone, format, venue_name, venue_address,
                                 venue_city, venue_country, online_url, capacity, visibility, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16)
         RETURNING ${this.tables.events.select}`,
        [
          input.organizerId,
          slug,
          title,
          values.description,
          input.startsAt,
          input.endsAt,
          values.timeZone,
          input.format,
          values.venue?.name ?? null,
          values.venue?.address ?? null,
          values.venue?.city ?? null,
          values.venue?.country ?? null,
          values.onlineUrl,
          values.capacity,
          input.visibility ?? 'public',
          now,
        ],
      )) as Record<string, unknown>[];
      return this.tables.events.map(rows[0]!);
    } catch (err) {
      throw slugTaken(err) ?? err;
    }
  }

  /**
   * Changes an event. Of a published event, emits `event.changed` when any stored value changed (not
   * for a change that leaves it as it was), and `registration.promoted` for each registration a raised
   * capacity confirmed, in the change's transaction.
   */
  async update(reader: EventsReader, eventId: string, changes: EventChanges): Promise<Event> {
    const event = await this.requireManageable(reader, eventId, 'change this event');
    const timesChange = changes.startsAt != null || changes.endsAt != null;
    const startsAt = changes.startsAt ?? event.startsAt;
    const endsAt = changes.endsAt ?? event.endsAt;
    const valid = checkAll({
      title: () => ifGiven(changes.title, checkTitle),
      slug: () => ifGiven(changes.slug, (slug) => checkSlug(slug.trim().toLowerCase(), 100)),
      description: () => ifGiven(changes.description, (description) => checkDescription(description, 20000)),
      timeRange: () => (timesChange ? checkTimeRange(startsAt, endsAt) : undefined),
      timeZone: () => ifGiven(changes.timeZone, checkTimeZone),
      venue: () => ifGiven(changes.venue, (venue) => checkVenue(venue)),
      onlineUrl: () => ifGiven(changes.onlineUrl, (url) => (url === '' ? null : checkUrl(url, 'onlineUrl', { httpsOnly: true }))),
      capacity: () => ifGiven(changes.capacity, (capacity) => checkPositiveInt(capacity, 'capacity', 'INVALID_CAPACITY', 'Capacity')),
    });
    const update = new Assignments([eventId]);
    const set = (column: string, value: unknown) => update.set(column, value);
    if (valid.title !== undefined) set('title', valid.title);
    if (valid.slug !== undefined) set('slug', valid.slug);
    if (valid.description !== undefined) set('description', valid.description);
    if (timesChange) {
      set('starts_at', startsAt);
      set('ends_at', endsAt);
    }
    if (valid.timeZone !== undefined) set('time_zone', valid.timeZone);
    if (changes.format != null) set('format', changes.format);
    if (valid.venue !== undefined) {
      set('venue_name', valid.venue.name);
      set('venue_address', valid.venue.address);
      set('venue_city', valid.venue.city);
      set('venue_country', valid.venue.country);
    }
    if (valid.onlineUrl !== undefined) set('online_url', valid.onlineUrl);
    if (changes.visibility != null) set('visibility', changes.visibility);
    const { capacity } = valid;
    if (capacity !== undefined) set('capacity', capacity);
    const now = this.clock.now();
    set('updated_at', now);

    try {
      const { events } = this.tables;
      const updated = await reader.changeEvent(eventId, async (tx, current) => {
        if (capacity !== undefined && capacity < current!.confirmedSeats) {
          throw new EventError(
            'CAPACITY_BELOW_CONFIRMED',
            `${current!.confirmedSeats} seats are already confirmed: capacity cannot be lower.`,
            'capacity',
          );
        }
        await tx.query(`UPDATE events SET ${update.toSql()} WHERE id = $1`, update.params);
        // Registrations a raised capacity confirmed from the waitlist.
        const promoted = capacity !== undefined && event.status === 'published' ? await this.waitlist.promote(tx, eventId, now) : [];
        const [row] = (await tx.query(`SELECT ${events.select} FROM events e WHERE e.id = $1`, [eventId])) as Record<string, unknown>[];
        const after = events.map(row!);
        const changed = current?.status === 'published' ? changesBetween(toldValues(current), toldValues(after)) : [];
        if (changed.length > 0) {
          await this.notices.event(tx, { message: 'event.changed', eventId, changes: changed, changedAt: now.toISOString() });
        }
        await this.outbox.emit(tx, [
          ...promoted.map((p) => registrationEvent('registration.promoted', now, event.organizerId, { ...p, eventId })),
          ...(current?.status === 'published' && anythingChanged(current, after)
            ? [eventEvent('event.changed', now, event.organizerId, eventId)]
            : []),
        ]);
        return { row: row!, promoted };
      });
      return events.map(updated.row);
    } catch (err) {
      throw slugTaken(err) ?? err;
    }
  }

  async publish(reader: EventsReader, eventId: string): Promise<Event> {
    const event = await this.requireManageable(reader, eventId, 'publish this event');
    if (event.status !== 'draft') throw new EventError('EVENT_NOT_DRAFT', 'Only a draft can be published.', 'eventId');
    const missing = missingForPublication(event, (await reader.ticketTypesOfEvent.load(eventId)).length);
    if (missing) throw missing;
    const { events } = this.tables;
    const now = this.clock.now();
    // One statement, in a transaction only so that its domain event commits with it.
    const published = await reader.writeEvent(eventId, (db) =>
      db.transaction(async (tx) => {
        const [rows] = (await tx.query(
          `UPDATE events e SET status = 'published', published_at = $2, updated_at = $2 WHERE e.id = $1 AND e.status = 'draft'
           RETURNING ${events.select}`,
          [eventId, now],
        )) as [Record<string, unknown>[], number];
        if (!rows[0]) throw new EventError('EVENT_NOT_DRAFT', 'Only a draft can be published.', 'eventId');
        await this.outbox.emit(tx, [eventEvent('event.published', now, event.organizerId, eventId)]);
        return rows[0];
      }),
    );
    return events.map(published);
  }

  /**
   * Cancels a published event and, in the same transaction, ends every registration still confirmed or
   * waitlisted (`cancelled_by` = `event_cancelled`): nobody holds a seat of a cancelled event, so its
   * seat and ticket counters go back to zero. Emits `event.cancelled` with it, and nothing for each
   * registration it ends: no `registration.cancelled` (receivers learn of those from `event.cancelled`,
   * and the registrations read as cancelled by `event_cancelled`).
   */
  async cancel(reader: EventsReader, eventId: string): Promise<Event> {
    const event = await this.requireManageable(reader, eventId, 'cancel this event');
    if (event.status !== 'published')
      throw new EventError('EVENT_NOT_DRAFT', 'Only a published event can be cancelled; delete a draft instead.', 'eventId');
    const { events } = this.tables;
    const now = this.clock.now();
    const cancelled = await reader.changeEvent(eventId, async (tx, current) => {
      if (current?.status !== 'published') throw new EventError('EVENT_NOT_DRAFT', 'Only a published event can be cancelled.', 'eventId');
      // One statement: the event, its registrations and its counters. The registrations it ends are told
      // by the notice's fan-out, which finds them by `cancelled_by` (src/notifications/notice-sender.ts).
      const [[row]] = (await tx.query(
        `WITH ended AS (
           UPDATE registrations SET status = 'cancelled', cancelled_at = $2, cancelled_by = 'event_cancelled', updated_at = $2
            WHERE event_id = $1 AND status <> 'cancelled'),
         unsold AS (UPDATE ticket_types SET sold = 0 WHERE event_id = $1 AND sold <> 0)
         UPDATE events e SET status = 'cancelled', cancelled_at = $2, updated_at = $2, confirmed_seats = 0 WHERE e.id = $1
         RETURNING ${events.select}`,
        [eventId, now],
      )) as [Record<string, unknown>[], number];
      await this.notices.event(tx, { message: 'event.cancelled', eventId });
      await this.outbox.emit(tx, [eventEvent('event.cancelled', now, event.organizerId, eventId)]);
      return { row: row! };
    });
    return events.map(cancelled.row);
  }

  async delete(reader: EventsReader, eventId: string): Promise<void> {
    const event = await this.requireManageable(reader, eventId, 'delete this event');
    if (event.status !== 'draft')
      throw new EventError('EVENT_NOT_DRAFT', 'Only a draft can be deleted; cancel a published event instead.', 'eventId');
    const [, count] = (await reader.writeEvent(eventId, (db) =>
      db.query(`DELETE FROM events WHERE id = $1 AND status = 'draft'`, [eventId]),
    )) as [unknown, number];
    if (count === 0) throw new EventError('EVENT_NOT_DRAFT', 'Only a draft can be deleted; cancel a published event instead.', 'eventId');
  }

  /**
   * The event's online address, for those who may have it: its organizer's team and attendees with a
   * confirmed registration. The one rule GraphQL and REST both apply.
   */
  async onlineUrlFor(reader: EventsReader, event: Event): Promise<string | null> {
    if (!event.onlineUrl || reader.anonymous) return null;
    const [role, registration] = await Promise.all([reader.role(event.organizerId), reader.activeRegistration(event.id)]);
    return EventsPolicy.canSeeOnlineUrl(role, registration?.status === 'confirmed') ? event.onlineUrl : null;
  }

  /** Upcoming, ongoing or ended, now. */
  phaseOf(event: Pick<Event, 'startsAt' | 'endsAt'>): EventPhaseValue {
    return eventPhase(event, this.clock.now());
  }

  /** The event, if the caller may see it. */
  async findVisible(reader: EventsReader, eventId: string): Promise<Event | null> {
    const event = await reader.events.load(eventId);
    return event && EventsPolicy.canView(event, await reader.role(event.organizerId)) ? event : null;
  }

  async findVisibleBySlug(reader: EventsReader, slug: string): Promise<Event | null> {
    const { events } = this.tables;
    const rows = (await this.dataSource.query(`SELECT ${events.select} FROM events e WHERE e.slug = $1`, [slug.toLowerCase()])) as Record<
      string,
      unknown
    >[];
    const event = rows[0] ? events.map(rows[0]) : null;
    if (event) reader.events.prime(event.id, event);
    return event && EventsPolicy.canView(event, await reader.role(event.organizerId)) ? event : null;
  }

  /** The event an id (a uuid, any case) or a slug names, if the caller may see it: what the REST API and the MCP tools take. */
  findVisibleByIdOrSlug(reader: EventsReader, idOrSlug: string): Promise<Event | null> {
    return isUuid(idOrSlug) ? this.findVisible(reader, idOrSlug.toLowerCase()) : this.findVisibleBySlug(reader, idOrSlug);
  }

  /** The event the caller may manage; not found when they may not even see it. */
  async requireManageable(reader: EventsReader, eventId: string, action: string): Promise<Event> {
    return this.requireRole(reader, eventId, EventsPolicy.canManage, action);
  }

  async requireRole(reader: EventsReader, eventId: string, allowed: (role: CallerRole | null) => boolean, action: string): Promise<Event> {
    const event = await reader.events.load(eventId);
    const role = event ? await reader.role(event.organizerId) : null;
    if (!event) throw EventError.notFound('Event', 'eventId');
    // A member held back by the second-factor requirement is told why, not that the event is missing.
    if (!EventsPolicy.canView(event, role) && !(await reader.membership(event.organizerId))) throw EventError.notFound('Event', 'eventId');
    if (!allowed(role)) throw await reader.refusal(event.organizerId, action);
    return event;
  }

  /** The public listing: published public events, by start time, filtered. */
  async list(filter: EventFilter, direction: OrderDirection, request: PageRequest): Promise<EventList> {
    const source = publicListing(this.tables.events.select, filter);
    const page = await this.pages.page(source, byStart('Query.events', direction), request, this.tables.events.map);
    return { page, totalCount: () => this.count(source) };
  }

  /** The same listing in numbered pages (legacy REST API). */
  listNumbered(filter: EventFilter, direction: OrderDirection, page: number, perPage: number): Promise<NumberedPage<Event>> {
    return fetchNumberedPage(
      (sql, p) => this.dataSource.query(sql, p),
      publicListing(this.tables.events.select, filter),
      startOrder(direction),
      page,
      perPage,
      this.tables.events.map,
    );
  }

  /** An organizer's events: all of them for its members, the listed ones for everyone else. */
  async listOfOrganizer(reader: EventsReader, organizerId: string, direction: OrderDirection, request: PageRequest): Promise<EventList> {
    const source = organizerListing(this.tables.events.select, organizerId, await reader.role(organizerId));
    const page = await this.pages.page(source, byStart('Organizer.events', direction), request, this.tables.events.map);
    return { page, totalCount: () => this.count(source) };
  }

  async listOfOrganizerNumbered(reader: EventsReader, organizerId: string, page: number, perPage: number): Promise<NumberedPage<Event>> {
    const source = organizerListing(this.tables.events.select, organizerId, await reader.role(organizerId));
    return fetchNumberedPage((sql, p) => this.dataSource.query(sql, p), source, startOrder('ASC'), page, perPage, this.tables.events.map);
  }

  private async count(source: { from: string; where: string[]; params: unknown[] }): Promise<number> {
    const rows = (await this.dataSource.query(
      `SELECT count(*)::int AS n FROM ${source.from} WHERE ${source.where.join(' AND ')}`,
      source.params,
    )) as {
      n: number;
    }[];
    return rows[0]!.n;
  }
}

/** Whether a stored value of the event changed (its last update time and seat counter aside). */
function anythingChanged(before: Event, after: Event): boolean {
  return (Object.keys(after) as (keyof Event)[]).some(
    (key) => key !== 'updatedAt' && key !== 'confirmedSeats' && JSON.stringify(before[key]) !== JSON.stringify(after[key]),
  );
}

function publicListing(select: string, filter: EventFilter): PageSource {
  const where = [`e.status = 'published'`, `e.visibility = 'public'`];
  const params: unknown[] = [];
  const param = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  if (filter.startsAfter) where.push(`e.starts_at >= ${param(filter.startsAfter)}`);
  if (filter.startsBefore) where.push(`e.starts_at < ${param(filter.startsBefore)}`);
  if (filter.organizerSlug)
    where.push(`e.organizer_id = (SELECT id FROM organizers WHERE slug = ${param(filter.organizerSlug.toLowerCase())})`);
  if (filter.search?.trim()) where.push(`e.title ILIKE ${param(`%${escapeLike(filter.search.trim())}%`)}`);
  return { select, from: 'events e', where, params };
}

function organizerListing(select: string, organizerId: string, role: CallerRole | null): PageSource {
  const where = ['e.organizer_id = $1'];
  if (role === null) where.push(`e.status = 'published'`, `e.visibility = 'public'`);
  return { select, from: 'events e', where, params: [organizerId] };
}

const startOrder = (direction: OrderDirection): string => `e.starts_at ${direction}, e.id ${direction}`;

function slugTaken(err: unknown): EventError | undefined {
  return violatedUniqueConstraint(err) === 'events_slug_key'
    ? new EventError('SLUG_TAKEN', 'This slug is already taken.', 'slug')
    : undefined;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
