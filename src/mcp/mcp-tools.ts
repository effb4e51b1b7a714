import { z } from 'zod';
import { personOf, Principal } from '../auth/principal.js';
import { EventError, uuidOrNotFound } from '../events/events.errors.js';
import type { Event } from '../events/events.model.js';
import type { EventsReader } from '../events/events.reader.js';
import type { EventsService } from '../events/events.service.js';
import type { RegistrationsService } from '../events/registrations.service.js';
import type { TicketTypesService } from '../events/ticket-types.service.js';
import {
  CheckInJson,
  checkInJson,
  EventJson,
  eventJson,
  RegistrationJson,
  registrationJson,
  TicketTypeJson,
  ticketTypeJson,
} from '../legacy-api/legacy-representations.js';

/**
 * The MCP server's tools: each one call of the events services, with the caller's EventsReader, so
 * that a tool sees and may do exactly what the same token may through GraphQL and the REST API (the
 * services and EventsPolicy decide; nothing here re-implements a rule). Their results are the REST
 * API's representations (snake_case, documented in its OpenAPI document), as structured content and
 * as its JSON text.
 */

/** What a tool runs with: the request's caller and the services. */
export interface ToolContext {
  principal: Principal;
  reader: EventsReader;
  events: EventsService;
  registrations: RegistrationsService;
  ticketTypes: TicketTypesService;
}

export interface McpTool {
  name: string;
  title: string;
  description: string;
  /** Any one of these scopes lets a token list and call the tool. */
  scopes: readonly string[];
  /** True when the tool changes nothing (MCP `readOnlyHint`). */
  readOnly: boolean;
  input: z.ZodObject;
  output: z.ZodObject;
  run(context: ToolContext, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

const READ = ['api', 'read_api'] as const;
const WRITE = ['api'] as const;

const eventRef = z
  .string()
  .min(1)
  .max(200)
  .describe('The event: its id (a uuid, as find_events answers it) or its slug (the last part of its address)');
const page = z.number().int().min(1).max(10_000).default(1).describe('Page number, from 1');
const perPage = (max: number, fallback: number) =>
  z.number().int().min(1).max(max).default(fallback).describe(`Results per page, at most ${max}`);
const dateTime = z.iso.datetime({ offset: true }).describe('ISO 8601 date and time with an offset, such as 2027-05-01T18:00:00Z');
const paging = {
  page: z.number().int().describe('This page'),
  per_page: z.number().int(),
  total: z.number().int().describe('Results on every page together'),
  total_pages: z.number().int(),
};

/** An event by id or slug, if the caller may see it (drafts and private events only for their organizer's team). */
async function visibleEvent(context: ToolContext, ref: string): Promise<Event> {
  const event = await context.events.findVisibleByIdOrSlug(context.reader, ref);
  if (!event) throw EventError.notFound('Event', 'event');
  return event;
}

function paged<T>(result: { total: number; page: number; perPage: number }, items: Record<string, T>) {
  return {
    ...items,
    page: result.page,
    per_page: result.perPage,
    total: result.total,
    total_pages: Math.ceil(result.total / result.perPage),
  };
}

export const MCP_TOOLS: readonly McpTool[] = [
  {
    name: 'find_events',
    title: 'Find events',
    description:
      'Published public events, by start time: upcoming and past, optionally filtered by text in the title, organizer and a time window. ' +
      'Answers one page of events (with their ids and slugs for get_event and register_for_event).',
    scopes: READ,
    readOnly: true,
    input: z.object({
      search: z.string().max(200).optional().describe('Text in the title, any case'),
      organizer: z.string().max(100).optional().describe("The organizer's slug"),
      starts_after: dateTime.optional().describe('Only events starting at or after this time (ISO 8601)'),
      starts_before: dateTime.optional().describe('Only events starting before this time (ISO 8601)'),
      sort: z.enum(['asc', 'desc']).default('asc').describe('By start time: asc (soonest first) or desc'),
      page,
      per_page: perPage(50, 10),
    }),
    output: z.object({ events: z.array(EventJson), ...paging }),
    async run(context, args) {
      const result = await context.events.listNumbered(
        {
          search: args.search as string | undefined,
          organizerSlug: args.organizer as string | undefined,
          startsAfter: args.starts_after ? new Date(args.starts_after as string) : undefined,
          startsBefore: args.starts_before ? new Date(args.starts_before as string) : undefined,
        },
        args.sort === 'desc' ? 'DESC' : 'ASC',
        args.page as number,
        args.per_page as number,
      );
      return paged(result, { events: await Promise.all(result.items.map((e) => eventJson(e, context.reader, context.events))) });
    },
  },
  {
    name: 'get_event',
    title: 'Event details',
    description:
      "One event and its ticket types (each with its id, price and seats remaining, as register_for_event needs them). The event's online address is " +
      'given only to its organizer’s team and to attendees with a confirmed registration.',
    scopes: READ,
    readOnly: true,
    input: z.object({ event: eventRef }),
    output: z.object({ event: EventJson, ticket_types: z.array(TicketTypeJson) }),
    async run(context, args) {
      const event = await visibleEvent(context, args.event as string);
      const [json, ticketTypes] = await Promise.all([
        eventJson(event, context.reader, context.events),
        context.ticketTypes.visibleOfEvent(context.reader, event),
      ]);
      return { event: json, ticket_types: ticketTypes.map(ticketTypeJson) };
    },
  },
  {
    name: 'my_registrations',
    title: 'My registrations',
    description: "The signed-in user's own registrations, newest first, with their attendees and reference codes.",
    scopes: READ,
    readOnly: true,
    input: z.object({
      status: z.enum(['confirmed', 'waitlisted', 'cancelled']).optional().describe('Only registrations in this state'),
      page,
      per_page: perPage(50, 10),
    }),
    output: z.object({ registrations: z.array(RegistrationJson), ...paging }),
    async run(context, args) {
      const user = personOf(context.principal);
      const result = await context.registrations.listOfUserNumbered(
        user.id,
        (args.status as 'confirmed' | 'waitlisted' | 'cancelled' | undefined) ?? null,
        args.page as number,
        args.per_page as number,
      );
      return paged(result, { registrations: await Promise.all(result.items.map((r) => registrationJson(r, context.reader))) });
    },
  },
  {
    name: 'register_for_event',
    title: 'Register for an event',
    description:
      'Registers the signed-in user (and the other people named) for an event with one ticket type. When the event or the ticket type is full, ' +
      'the registration joins the waitlist (status "waitlisted") and is confirmed when a seat frees up. A ticket type costs nothing to register; ' +
      'payment, if any, is arranged by the organizer.',
    scopes: WRITE,
    readOnly: false,
    input: z.object({
      event: eventRef,
      ticket_type_id: z.string().describe("The ticket type's id, from get_event"),
      attendees: z
        .array(
          z.object({
            name: z.string().min(1).max(200).describe("The attendee's full name"),
            email: z.string().min(3).max(320).describe("The attendee's e-mail address"),
          }),
        )
        .min(1)
        .max(50)
        .describe('The people attending, one seat each (the signed-in user first, when attending)'),
    }),
    output: z.object({ registration: RegistrationJson }),
    async run(context, args) {
      personOf(context.principal);
      const event = await visibleEvent(context, args.event as string);
      const registration = await context.registrations.register(context.reader, {
        eventId: event.id,
        ticketTypeId: uuidOrNotFound(args.ticket_type_id as string, 'TicketType', 'ticket_type_id'),
        attendees: args.attendees as { name: string; email: string }[],
      });
      return { registration: await registrationJson(registration, context.reader) };
    },
  },
  {
    name: 'cancel_registration',
    title: 'Cancel a registration',
    description:
      'Cancels one of the signed-in user’s registrations (confirmed or waitlisted); its seats go to the waitlist. Cannot be undone.',
    scopes: WRITE,
    readOnly: false,
    input: z.object({ registration_id: z.string().describe("The registration's id, from my_registrations") }),
    output: z.object({ registration: RegistrationJson }),
    async run(context, args) {
      const registration = await context.registrations.cancel(
        context.reader,
        uuidOrNotFound(args.registration_id as string, 'Registration', 'registration_id'),
      );
      return { registration: await registrationJson(registration, context.reader) };
    },
  },
  {
    name: 'event_registrations',
    title: "An event's registrations",
    description:
      "An event's registrations with their attendees, oldest first: for its organizer's team (owners, admins and check-in staff) only.",
    scopes: READ,
    readOnly: true,
    input: z.object({
      event: eventRef,
      status: z.enum(['confirmed', 'waitlisted', 'cancelled']).optional().describe('Only registrations in this state'),
      page,
      per_page: perPage(100, 20),
    }),
    output: z.object({ registrations: z.array(RegistrationJson), ...paging }),
    async run(context, args) {
      const event = await visibleEvent(context, args.event as string);
      const result = await context.registrations.listOfEventNumbered(
        context.reader,
        event.id,
        (args.status as 'confirmed' | 'waitlisted' | 'cancelled' | undefined) ?? null,
        args.page as number,
        args.per_page as number,
      );
      return paged(result, { registrations: await Promise.all(result.items.map((r) => registrationJson(r, context.reader))) });
    },
  },
  {
    name: 'check_in_attendee',
    title: 'Check in an attendee',
    description:
      "Admits an attendee at the door, by the ticket code scanned from their ticket or by their attendee id: for the event's organizer's " +
      'team only. Checking in twice is harmless: already_checked_in is then true and checked_in_at the first time.',
    scopes: WRITE,
    readOnly: false,
    input: z.object({
      code: z.string().min(1).max(4096).optional().describe('The ticket code as scanned'),
      attendee_id: z.string().optional().describe("Or the attendee's id, from event_registrations (one of code and attendee_id)"),
      event: eventRef.optional().describe('The event the door admits people to: a ticket for another event is refused'),
    }),
    output: z.object({ check_in: CheckInJson }),
    async run(context, args) {
      const code = args.code as string | undefined;
      const attendeeId = args.attendee_id as string | undefined;
      const event = args.event === undefined ? undefined : await visibleEvent(context, args.event as string);
      const checkIn = await context.registrations.checkIn(context.reader, {
        code: code ?? null,
        attendeeId: attendeeId === undefined ? null : uuidOrNotFound(attendeeId, 'Attendee', 'attendee_id'),
        eventId: event?.id ?? null,
      });
      return { check_in: checkInJson(checkIn) };
    },
  },
];

/** Whether a token with these scopes may list and call the tool. */
export function mayUse(tool: McpTool, scopes: ReadonlySet<string>): boolean {
  return tool.scopes.some((s) => scopes.has(s));
}
