import { z } from 'zod';
import { pagingQuery } from './legacy-http.js';

/** The request bodies and query strings of the legacy REST API, checked before any service runs. */

const dateTime = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date and time with an offset, such as 2027-05-01T18:30:00Z' })
  .transform((v) => new Date(v));
const text = z.string({ error: 'must be a string' });

const VenueBody = z.object({
  name: text,
  address: text.nullish(),
  city: text.nullish(),
  country: text.nullish().describe('ISO 3166-1 alpha-2 code'),
});

export const CreateOrganizerBody = z
  .object({ slug: text, name: text, description: text.nullish(), website_url: text.nullish() })
  .meta({ id: 'CreateOrganizer' });

export const UpdateOrganizerBody = z
  .object({ name: text.nullish(), description: text.nullish(), website_url: text.nullish().describe('Empty string removes it') })
  .meta({ id: 'UpdateOrganizer' });

const eventFields = {
  title: text,
  slug: text.nullish().describe('Made from the title when omitted'),
  description: text.nullish(),
  starts_at: dateTime,
  ends_at: dateTime,
  time_zone: text.describe('IANA time zone such as Europe/Paris'),
  format: z.enum(['in_person', 'online', 'hybrid'], { error: 'must be in_person, online or hybrid' }),
  venue: VenueBody.nullish(),
  online_url: text.nullish(),
  capacity: z.number({ error: 'must be a number' }).int('must be a whole number').nullish(),
  visibility: z.enum(['public', 'unlisted', 'private'], { error: 'must be public, unlisted or private' }).nullish(),
};

export const CreateEventBody = z
  .object({ organizer_id: z.uuid({ error: 'must be an organizer id' }), ...eventFields })
  .meta({ id: 'CreateEvent' });

export const UpdateEventBody = z
  .object({
    ...eventFields,
    title: eventFields.title.nullish(),
    starts_at: eventFields.starts_at.nullish(),
    ends_at: eventFields.ends_at.nullish(),
    time_zone: eventFields.time_zone.nullish(),
    format: eventFields.format.nullish(),
  })
  .meta({ id: 'UpdateEvent' });

const ticketFields = {
  name: text,
  description: text.nullish(),
  price: z.object({ amount: z.number({ error: 'must be a number' }).int('must be a whole number of minor units'), currency: text }),
  quantity: z.number({ error: 'must be a number' }).int('must be a whole number').nullish(),
  sales_start_at: dateTime.nullish(),
  sales_end_at: dateTime.nullish(),
  hidden: z.boolean({ error: 'must be true or false' }).nullish(),
  min_per_order: z.number({ error: 'must be a number' }).int('must be a whole number').nullish(),
  max_per_order: z.number({ error: 'must be a number' }).int('must be a whole number').nullish(),
};

export const CreateTicketTypeBody = z.object(ticketFields).meta({ id: 'CreateTicketType' });

export const UpdateTicketTypeBody = z
  .object({ ...ticketFields, name: ticketFields.name.nullish(), price: ticketFields.price.nullish() })
  .meta({ id: 'UpdateTicketType' });

export const RegisterBody = z
  .object({
    ticket_type_id: z.uuid({ error: 'must be a ticket type id' }),
    attendees: z
      .array(z.object({ name: text, email: text }), { error: 'must be a list of {name, email}' })
      .min(1, 'must name at least one attendee'),
  })
  .meta({ id: 'Register' });

export const CheckInBody = z
  .object({
    code: text.max(4096, 'is too long for a ticket code').nullish().describe('Ticket code as scanned'),
    attendee_id: z.uuid({ error: 'must be an attendee id' }).nullish().describe('Or the attendee, by id'),
    event_id: z
      .uuid({ error: 'must be an event id' })
      .nullish()
      .describe('Event the door admits people to: a ticket for another event is refused'),
  })
  .meta({ id: 'CheckInRequest' });

export const ListEventsQuery = pagingQuery.extend({
  starts_after: dateTime.optional(),
  starts_before: dateTime.optional(),
  organizer: z.string().optional().describe('Organizer slug'),
  search: z.string().max(200).optional().describe('Text in the title, any case'),
  sort: z.enum(['asc', 'desc'], { error: 'must be asc or desc' }).default('asc').describe('By start time'),
});

export const RegistrationsQuery = pagingQuery.extend({
  status: z.enum(['confirmed', 'waitlisted', 'cancelled'], { error: 'must be confirmed, waitlisted or cancelled' }).optional(),
});

/** An event body in the services' terms (the fields create and update share). */
export function toEventChanges(body: z.output<typeof UpdateEventBody>) {
  return {
    title: body.title,
    slug: body.slug,
    description: body.description,
    startsAt: body.starts_at,
    endsAt: body.ends_at,
    timeZone: body.time_zone,
    format: body.format,
    venue: body.venue,
    onlineUrl: body.online_url,
    capacity: body.capacity,
    visibility: body.visibility,
  };
}

/** A ticket type body in the services' terms. */
export function toTicketTypeChanges(body: z.output<typeof UpdateTicketTypeBody>) {
  return {
    name: body.name,
    description: body.description,
    price: body.price,
    quantity: body.quantity,
    salesStartAt: body.sales_start_at,
    salesEndAt: body.sales_end_at,
    hidden: body.hidden,
    minPerOrder: body.min_per_order,
    maxPerOrder: body.max_per_order,
  };
}
