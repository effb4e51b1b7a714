import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EntityTable } from '../database/entity-table.js';
import { AttendeeEntity } from './attendee.entity.js';
import { EventEntity, type EventFormatValue, type EventStatusValue } from './event.entity.js';
import { OrganizerEntity } from './organizer.entity.js';
import { RegistrationEntity, type RegistrationStatusValue } from './registration.entity.js';
import { TicketTypeEntity } from './ticket-type.entity.js';

/** What a message about one registration says, read when it is sent (src/notifications/). */
export interface RegistrationFacts {
  registration: {
    id: string;
    reference: string;
    status: RegistrationStatusValue;
    quantity: number;
    userId: string;
    ticketTypeName: string;
    confirmedAt: Date | null;
  };
  event: {
    id: string;
    slug: string;
    title: string;
    status: EventStatusValue;
    startsAt: Date;
    endsAt: Date;
    timeZone: string;
    format: EventFormatValue;
    venue: { name: string | null; address: string | null; city: string | null; country: string | null };
    onlineUrl: string | null;
    organizerName: string;
    updatedAt: Date;
  };
  attendees: { id: string; name: string; position: number }[];
}

/**
 * Reads for the messages of the events domain: a registration with its event, ticket type and
 * attendees, and the registrations an event-wide message goes to. Internal: no reader's access rules
 * apply (the recipient is the registrant), and nothing here is served by an API.
 */
@Injectable()
export class NoticeFacts {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.registration = EntityTable.of(dataSource, RegistrationEntity, 'r').pick(...REGISTRATION_READ);
    this.event = EntityTable.of(dataSource, EventEntity, 'e').pick(...EVENT_READ);
    this.attendees = EntityTable.of(dataSource, AttendeeEntity, 'a').pick('id', 'name', 'position');
    const ticketTypes = EntityTable.of(dataSource, TicketTypeEntity, 't');
    const organizers = EntityTable.of(dataSource, OrganizerEntity, 'o');
    // The event's columns under `e.` (it has an id and a status too); the ticket type's and the organizer's name under their own.
    this.ofRegistrationSql = `SELECT ${this.registration.select}, ${this.event.selectAs()},
              t.${ticketTypes.column('name')} AS ticket_type_name, o.${organizers.column('name')} AS organizer_name
         FROM registrations r
         JOIN events e ON e.id = r.event_id
         JOIN ticket_types t ON t.id = r.ticket_type_id
         JOIN organizers o ON o.id = e.organizer_id
        WHERE r.id = $1`;
  }

  private readonly registration: EntityTable<Pick<RegistrationEntity, (typeof REGISTRATION_READ)[number]>, RegistrationEntity>;
  private readonly event: EntityTable<Pick<EventEntity, (typeof EVENT_READ)[number]>, EventEntity>;
  private readonly attendees: EntityTable<Pick<AttendeeEntity, 'id' | 'name' | 'position'>, AttendeeEntity>;
  private readonly ofRegistrationSql: string;

  async ofRegistration(registrationId: string): Promise<RegistrationFacts | null> {
    const [row] = (await this.dataSource.query(this.ofRegistrationSql, [registrationId])) as Record<string, unknown>[];
    if (!row) return null;
    const attendees = (
      (await this.dataSource.query(`SELECT ${this.attendees.select} FROM attendees a WHERE a.registration_id = $1 ORDER BY a.position`, [
        registrationId,
      ])) as Record<string, unknown>[]
    ).map(this.attendees.map);
    const registration = this.registration.map(row);
    const event = this.event.mapAs(row);
    return {
      registration: { ...registration, ticketTypeName: row.ticket_type_name as string },
      event: {
        id: event.id,
        slug: event.slug,
        title: event.title,
        status: event.status,
        startsAt: event.startsAt,
        endsAt: event.endsAt,
        timeZone: event.timeZone,
        format: event.format,
        venue: { name: event.venueName, address: event.venueAddress, city: event.venueCity, country: event.venueCountry },
        onlineUrl: event.onlineUrl,
        organizerName: row.organizer_name as string,
        updatedAt: event.updatedAt,
      },
      attendees,
    };
  }

  /** The event's registrations in these states, oldest first. */
  async registrationsOf(eventId: string, statuses: RegistrationStatusValue[]): Promise<string[]> {
    const rows = (await this.dataSource.query(
      `SELECT id FROM registrations WHERE event_id = $1 AND status = ANY($2::text[]) ORDER BY created_at, id`,
      [eventId, statuses],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }

  /** The registrations the event's cancellation ended (cancelled at the moment the event was). */
  async endedByCancellation(eventId: string): Promise<string[]> {
    const rows = (await this.dataSource.query(
      `SELECT r.id FROM registrations r JOIN events e ON e.id = r.event_id
        WHERE r.event_id = $1 AND e.status = 'cancelled' AND r.status = 'cancelled' AND r.cancelled_by = 'event_cancelled'
        ORDER BY r.created_at, r.id`,
      [eventId],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }
}

/** What a message says of a registration (RegistrationFacts.registration, with its ticket type's name). */
const REGISTRATION_READ = [
  'id',
  'reference',
  'status',
  'quantity',
  'userId',
  'confirmedAt',
] as const satisfies readonly (keyof RegistrationEntity)[];

/** What a message says of the event (RegistrationFacts.event: the venue's columns as one object, with its organizer's name). */
const EVENT_READ = [
  'id',
  'slug',
  'title',
  'status',
  'startsAt',
  'endsAt',
  'timeZone',
  'format',
  'venueName',
  'venueAddress',
  'venueCity',
  'venueCountry',
  'onlineUrl',
  'updatedAt',
] as const satisfies readonly (keyof EventEntity)[];
