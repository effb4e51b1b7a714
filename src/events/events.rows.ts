import type { Attendee, Event, Organizer, OrganizerMember, Registration, TicketType } from './events.model.js';

/** Column lists and row mappers of the events tables, for the services' SQL. */

type Row = Record<string, unknown>;
const date = (v: unknown): Date => v as Date;
const dateOrNull = (v: unknown): Date | null => (v as Date | null) ?? null;
const textOrNull = (v: unknown): string | null => (v as string | null) ?? null;
const intOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export const ORGANIZER_COLUMNS = 'o.id, o.slug, o.name, o.description, o.website_url, o.created_at';

export function toOrganizer(r: Row): Organizer {
  return {
    id: r.id as string,
    slug: r.slug as string,
    name: r.name as string,
    description: r.description as string,
    websiteUrl: textOrNull(r.website_url),
    createdAt: date(r.created_at),
  };
}

export const MEMBER_COLUMNS = 'm.organizer_id, m.user_id, m.role, m.created_at';

export function toMember(r: Row): OrganizerMember {
  return {
    organizerId: r.organizer_id as string,
    userId: r.user_id as string,
    role: r.role as OrganizerMember['role'],
    createdAt: date(r.created_at),
  };
}

export const EVENT_COLUMNS = `e.id, e.organizer_id, e.slug, e.title, e.description, e.starts_at, e.ends_at, e.time_zone, e.format,
  e.venue_name, e.venue_address, e.venue_city, e.venue_country, e.online_url, e.capacity, e.confirmed_seats, e.status,
  e.visibility, e.published_at, e.cancelled_at, e.created_at, e.updated_at`;

export function toEvent(r: Row): Event {
  return {
    id: r.id as string,
    organizerId: r.organizer_id as string,
    slug: r.slug as string,
    title: r.title as string,
    description: r.description as string,
    startsAt: date(r.starts_at),
    endsAt: date(r.ends_at),
    timeZone: r.time_zone as string,
    format: r.format as Event['format'],
    venue:
      r.venue_name === null || r.venue_name === undefined
        ? null
        : {
            name: r.venue_name as string,
            address: textOrNull(r.venue_address),
            city: textOrNull(r.venue_city),
            country: textOrNull(r.venue_country),
          },
    onlineUrl: textOrNull(r.online_url),
    capacity: intOrNull(r.capacity),
    confirmedSeats: Number(r.confirmed_seats),
    status: r.status as Event['status'],
    visibility: r.visibility as Event['visibility'],
    publishedAt: dateOrNull(r.published_at),
    cancelledAt: dateOrNull(r.cancelled_at),
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
  };
}

export const TICKET_TYPE_COLUMNS = `t.id, t.event_id, t.name, t.description, t.price_amount, t.price_currency, t.quantity, t.sold,
  t.sales_start_at, t.sales_end_at, t.hidden, t.min_per_order, t.max_per_order, t.created_at`;

export function toTicketType(r: Row): TicketType {
  return {
    id: r.id as string,
    eventId: r.event_id as string,
    name: r.name as string,
    description: r.description as string,
    priceAmount: Number(r.price_amount),
    priceCurrency: r.price_currency as string,
    quantity: intOrNull(r.quantity),
    sold: Number(r.sold),
    salesStartAt: dateOrNull(r.sales_start_at),
    salesEndAt: dateOrNull(r.sales_end_at),
    hidden: r.hidden as boolean,
    minPerOrder: Number(r.min_per_order),
    maxPerOrder: Number(r.max_per_order),
    createdAt: date(r.created_at),
  };
}

export const REGISTRATION_COLUMNS = `r.id, r.event_id, r.ticket_type_id, r.user_id, r.reference, r.status, r.quantity, r.created_at,
  r.confirmed_at, r.cancelled_at`;

export function toRegistration(r: Row): Registration {
  return {
    id: r.id as string,
    eventId: r.event_id as string,
    ticketTypeId: r.ticket_type_id as string,
    userId: r.user_id as string,
    reference: r.reference as string,
    status: r.status as Registration['status'],
    quantity: Number(r.quantity),
    createdAt: date(r.created_at),
    confirmedAt: dateOrNull(r.confirmed_at),
    cancelledAt: dateOrNull(r.cancelled_at),
  };
}

export const ATTENDEE_COLUMNS = 'a.id, a.registration_id, a.name, a.email, a.position, a.checked_in_at';

export function toAttendee(r: Row): Attendee {
  return {
    id: r.id as string,
    registrationId: r.registration_id as string,
    name: r.name as string,
    email: r.email as string,
    position: Number(r.position),
    checkedInAt: dateOrNull(r.checked_in_at),
  };
}
