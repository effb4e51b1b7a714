import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { EventFormatValue, EventStatusValue } from './event.entity.js';
import type { RegistrationStatusValue } from './registration.entity.js';

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
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async ofRegistration(registrationId: string): Promise<RegistrationFacts | null> {
    const [row] = (await this.dataSource.query(
      `SELECT r.id, r.reference, r.status, r.quantity, r.user_id, r.confirmed_at, t.name AS ticket_type_name,
              e.id AS event_id, e.slug, e.title, e.status AS event_status, e.starts_at, e.ends_at, e.time_zone, e.format,
              e.venue_name, e.venue_address, e.venue_city, e.venue_country, e.online_url, e.updated_at, o.name AS organizer_name
         FROM registrations r
         JOIN events e ON e.id = r.event_id
         JOIN ticket_types t ON t.id = r.ticket_type_id
         JOIN organizers o ON o.id = e.organizer_id
        WHERE r.id = $1`,
      [registrationId],
    )) as Record<string, unknown>[];
    if (!row) return null;
    const attendees = (await this.dataSource.query(
      `SELECT id, name, position FROM attendees WHERE registration_id = $1 ORDER BY position`,
      [registrationId],
    )) as { id: string; name: string; position: number }[];
    return {
      registration: {
        id: row.id as string,
        reference: row.reference as string,
        status: row.status as RegistrationStatusValue,
        quantity: row.quantity as number,
        userId: row.user_id as string,
        ticketTypeName: row.ticket_type_name as string,
        confirmedAt: (row.confirmed_at as Date | null) ?? null,
      },
      event: {
        id: row.event_id as string,
        slug: row.slug as string,
        title: row.title as string,
        status: row.event_status as EventStatusValue,
        startsAt: row.starts_at as Date,
        endsAt: row.ends_at as Date,
        timeZone: row.time_zone as string,
        format: row.format as EventFormatValue,
        venue: {
          name: row.venue_name as string | null,
          address: row.venue_address as string | null,
          city: row.venue_city as string | null,
          country: row.venue_country as string | null,
        },
        onlineUrl: row.online_url as string | null,
        organizerName: row.organizer_name as string,
        updatedAt: row.updated_at as Date,
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
