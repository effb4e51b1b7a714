import { z } from 'zod';
import type { Attendee, Event, Organizer, OrganizerMember, Registration, TicketType } from '../events/events.model.js';
import type { EventsService } from '../events/events.service.js';
import type { EventsReader } from '../events/events.reader.js';
import type { CheckIn } from '../events/registrations.service.js';

/**
 * The legacy API's JSON: snake_case fields, lowercase enum values, ISO 8601 times, raw uuids as ids.
 * Each representation has a zod schema, used for the OpenAPI document.
 */

const iso = z.string().describe('ISO 8601 date and time, UTC');
const isoOrNull = iso.nullable();

export const UserJson = z.object({ id: z.string().uuid(), username: z.string(), name: z.string() }).meta({ id: 'User' });

export const OrganizerJson = z
  .object({
    id: z.string().uuid(),
    slug: z.string(),
    name: z.string(),
    description: z.string(),
    website_url: z.string().nullable(),
    created_at: iso,
  })
  .meta({ id: 'Organizer' });

export const MemberJson = z
  .object({ user: UserJson, role: z.enum(['owner', 'admin', 'check_in_staff']), created_at: iso })
  .meta({ id: 'OrganizerMember' });

const VenueJson = z.object({
  name: z.string(),
  address: z.string().nullable(),
  city: z.string().nullable(),
  country: z.string().nullable(),
});

export const EventJson = z
  .object({
    id: z.string().uuid(),
    organizer_id: z.string().uuid(),
    slug: z.string(),
    title: z.string(),
    description: z.string(),
    starts_at: iso,
    ends_at: iso,
    time_zone: z.string(),
    format: z.enum(['in_person', 'online', 'hybrid']),
    venue: VenueJson.nullable(),
    online_url: z.string().nullable().describe('Only for members of the organizer and confirmed attendees; null otherwise'),
    capacity: z.number().int().nullable(),
    spots_left: z.number().int().nullable(),
    status: z.enum(['draft', 'published', 'cancelled']),
    visibility: z.enum(['public', 'unlisted', 'private']),
    phase: z.enum(['upcoming', 'ongoing', 'ended']),
    published_at: isoOrNull,
  })
  .meta({ id: 'Event' });

export const TicketTypeJson = z
  .object({
    id: z.string().uuid(),
    event_id: z.string().uuid(),
    name: z.string(),
    description: z.string(),
    price: z.object({ amount: z.number().int().describe('Minor units'), currency: z.string() }),
    quantity: z.number().int().nullable(),
    remaining: z.number().int().nullable(),
    sales_start_at: isoOrNull,
    sales_end_at: isoOrNull,
    hidden: z.boolean(),
    min_per_order: z.number().int(),
    max_per_order: z.number().int(),
  })
  .meta({ id: 'TicketType' });

export const AttendeeJson = z
  .object({ id: z.string().uuid(), registration_id: z.string().uuid(), name: z.string(), email: z.string(), checked_in_at: isoOrNull })
  .meta({ id: 'Attendee' });

export const CheckInJson = AttendeeJson.extend({
  checked_in_at: iso.describe('When the attendee was first checked in'),
  already_checked_in: z.boolean().describe('True when the attendee had been checked in before this call (checked_in_at is that time)'),
}).meta({ id: 'CheckIn' });

export const RegistrationJson = z
  .object({
    id: z.string().uuid(),
    reference_code: z.string(),
    status: z.enum(['confirmed', 'waitlisted', 'cancelled']),
    event_id: z.string().uuid(),
    ticket_type_id: z.string().uuid(),
    user: UserJson,
    quantity: z.number().int(),
    attendees: z.array(AttendeeJson),
    created_at: iso,
    confirmed_at: isoOrNull,
    cancelled_at: isoOrNull,
    cancelled_by: z
      .enum(['attendee', 'organizer', 'event_cancelled'])
      .nullable()
      .describe('Who cancelled it: its registrant, the organizer, or the cancellation of the event; null while active'),
  })
  .meta({ id: 'Registration' });

export const ErrorJson = z
  .object({
    message: z.string(),
    code: z.string().optional().describe('Stable machine-readable code of a domain error, such as SOLD_OUT'),
    error: z.string().optional(),
    errors: z.record(z.string(), z.array(z.string())).optional().describe('Problems by field'),
  })
  .meta({ id: 'Error' });

const time = (d: Date | null) => (d ? d.toISOString() : null);

export function organizerJson(o: Organizer): z.infer<typeof OrganizerJson> {
  return {
    id: o.id,
    slug: o.slug,
    name: o.name,
    description: o.description,
    website_url: o.websiteUrl,
    created_at: o.createdAt.toISOString(),
  };
}

export async function memberJson(m: OrganizerMember, reader: EventsReader): Promise<z.infer<typeof MemberJson>> {
  const user = (await reader.users.load(m.userId))!;
  return { user: { id: user.id, username: user.username, name: user.name }, role: m.role, created_at: m.createdAt.toISOString() };
}

export async function eventJson(e: Event, reader: EventsReader, events: EventsService): Promise<z.infer<typeof EventJson>> {
  const onlineUrl = await events.onlineUrlFor(reader, e);
  return {
    id: e.id,
    organizer_id: e.organizerId,
    slug: e.slug,
    title: e.title,
    description: e.description,
    starts_at: e.startsAt.toISOString(),
    ends_at: e.endsAt.toISOString(),
    time_zone: e.timeZone,
    format: e.format,
    venue: e.venue,
    online_url: onlineUrl,
    capacity: e.capacity,
    spots_left: e.capacity === null ? null : e.capacity - e.confirmedSeats,
    status: e.status,
    visibility: e.visibility,
    phase: events.phaseOf(e),
    published_at: time(e.publishedAt),
  };
}

export function ticketTypeJson(t: TicketType): z.infer<typeof TicketTypeJson> {
  return {
    id: t.id,
    event_id: t.eventId,
    name: t.name,
    description: t.description,
    price: { amount: t.priceAmount, currency: t.priceCurrency },
    quantity: t.quantity,
    remaining: t.quantity === null ? null : t.quantity - t.sold,
    sales_start_at: time(t.salesStartAt),
    sales_end_at: time(t.salesEndAt),
    hidden: t.hidden,
    min_per_order: t.minPerOrder,
    max_per_order: t.maxPerOrder,
  };
}

export function attendeeJson(a: Attendee): z.infer<typeof AttendeeJson> {
  return { id: a.id, registration_id: a.registrationId, name: a.name, email: a.email, checked_in_at: time(a.checkedInAt) };
}

export function checkInJson(c: CheckIn): z.infer<typeof CheckInJson> {
  return { ...attendeeJson(c.attendee), checked_in_at: c.attendee.checkedInAt!.toISOString(), already_checked_in: c.alreadyCheckedIn };
}

export async function registrationJson(r: Registration, reader: EventsReader): Promise<z.infer<typeof RegistrationJson>> {
  const [user, attendees] = await Promise.all([reader.users.load(r.userId), reader.attendeesOfRegistration.load(r.id)]);
  return {
    id: r.id,
    reference_code: r.reference,
    status: r.status,
    event_id: r.eventId,
    ticket_type_id: r.ticketTypeId,
    user: { id: user!.id, username: user!.username, name: user!.name },
    quantity: r.quantity,
    attendees: attendees.map(attendeeJson),
    created_at: r.createdAt.toISOString(),
    confirmed_at: time(r.confirmedAt),
    cancelled_at: time(r.cancelledAt),
    cancelled_by: r.cancelledBy,
  };
}
