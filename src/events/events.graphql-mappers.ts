import { DomainError, failuresOf } from '../errors/domain-error.js';
import { Connection, toConnection } from '../graphql/connection.js';
import { idOfType, NodeType, toGlobalId } from '../graphql/global-id.js';
import type { Page } from '../database/keyset.js';
import type * as G from '../graphql/graphql.schema.js';
import { EventError } from './events.errors.js';
import type { Attendee, Event, Organizer, OrganizerMember, Registration, TicketType } from './events.model.js';

/**
 * The GraphQL edge's view of the events domain: models become GraphQL objects (global IDs, enum
 * names), each keeping its model under MODEL for the field resolvers of its relations.
 */
export const MODEL = Symbol('model');

export type GqlOrganizer = Omit<G.Organizer, 'viewerRole' | 'events' | 'members'> & { [MODEL]: Organizer };
export type GqlEvent = Omit<G.Event, 'organizer' | 'ticketTypes' | 'onlineUrl' | 'viewerRegistration' | 'registrations' | 'phase'> & {
  [MODEL]: Event;
};
export type GqlTicketType = Omit<G.TicketType, 'event' | 'onSale'> & { [MODEL]: TicketType };
export type GqlRegistration = Omit<G.Registration, 'event' | 'ticketType' | 'user' | 'attendees'> & { [MODEL]: Registration };
export type GqlAttendee = Omit<G.Attendee, 'registration'> & { [MODEL]: Attendee };
export type GqlMember = Omit<G.OrganizerMember, 'organizer' | 'user'> & { [MODEL]: OrganizerMember };

const upper = <T extends string>(value: string): T => value.toUpperCase() as T;
/** A GraphQL enum value as the domain spells it: `IN_PERSON` → `in_person`. */
export const lower = <T extends string>(value: string): T => value.toLowerCase() as T;

export function toGqlOrganizer(o: Organizer): GqlOrganizer {
  return {
    id: toGlobalId('Organizer', o.id),
    slug: o.slug,
    name: o.name,
    description: o.description,
    websiteUrl: o.websiteUrl,
    createdAt: o.createdAt,
    [MODEL]: o,
  };
}

export function toGqlEvent(e: Event): GqlEvent {
  return {
    id: toGlobalId('Event', e.id),
    slug: e.slug,
    title: e.title,
    description: e.description,
    startsAt: e.startsAt,
    endsAt: e.endsAt,
    timeZone: e.timeZone,
    format: upper(e.format),
    venue: e.venue,
    capacity: e.capacity,
    spotsLeft: e.capacity === null ? null : e.capacity - e.confirmedSeats,
    status: upper(e.status),
    visibility: upper(e.visibility),
    publishedAt: e.publishedAt,
    [MODEL]: e,
  };
}

/** Counts an event connection's events; called by the `totalCount` field resolver, so only when selected. */
export const COUNT = Symbol('count');

export type GqlEventConnection = Connection<GqlEvent> & { [COUNT]: () => Promise<number> };

export function toGqlEventConnection(page: Page<Event>, count: () => Promise<number>): GqlEventConnection {
  // Not spread: that would read the connection's lazy `edges` and build them.
  return Object.assign(toConnection(page, toGqlEvent), { [COUNT]: count });
}

export function toGqlTicketType(t: TicketType): GqlTicketType {
  return {
    id: toGlobalId('TicketType', t.id),
    name: t.name,
    description: t.description,
    price: { amount: t.priceAmount, currency: t.priceCurrency },
    quantity: t.quantity,
    remaining: t.quantity === null ? null : t.quantity - t.sold,
    salesStartAt: t.salesStartAt,
    salesEndAt: t.salesEndAt,
    hidden: t.hidden,
    minPerOrder: t.minPerOrder,
    maxPerOrder: t.maxPerOrder,
    [MODEL]: t,
  };
}

export function toGqlRegistration(r: Registration): GqlRegistration {
  return {
    id: toGlobalId('Registration', r.id),
    referenceCode: r.reference,
    status: upper(r.status),
    quantity: r.quantity,
    createdAt: r.createdAt,
    confirmedAt: r.confirmedAt,
    cancelledAt: r.cancelledAt,
    [MODEL]: r,
  };
}

export function toGqlAttendee(a: Attendee): GqlAttendee {
  return { id: toGlobalId('Attendee', a.id), name: a.name, email: a.email, checkedInAt: a.checkedInAt, [MODEL]: a };
}

export function toGqlMember(m: OrganizerMember): GqlMember {
  return { role: upper(m.role), createdAt: m.createdAt, [MODEL]: m };
}

export function toGqlUser(u: { id: string; username: string; name: string }): G.User {
  return { id: u.id, username: u.username, name: u.name };
}

/** The uuid behind a global ID given in an input; an ID of another type or of nothing is not found. */
export function requireId(globalId: string, type: NodeType, field: string): string {
  const id = idOfType(globalId, type);
  if (!id) throw EventError.notFound(type, field);
  return id;
}

type Payload<K extends string, T> = { [P in K]: T | null } & { userErrors: G.UserError[] };

/**
 * A mutation's payload: the result under `key`, or `userErrors` for what the user can fix (invalid
 * input, a conflicting state). Not-found, permission and unexpected failures stay request errors.
 */
export async function toPayload<K extends string, T>(key: K, run: () => Promise<T>): Promise<Payload<K, T>> {
  try {
    return { [key]: await run(), userErrors: [] } as Payload<K, T>;
  } catch (err) {
    if (!(err instanceof DomainError) || (err.kind !== 'invalid' && err.kind !== 'conflict')) throw err;
    return {
      [key]: null,
      userErrors: failuresOf(err).map((e) => ({
        field: e.field ? ['input', ...e.field.split('.')] : null,
        message: e.message,
        code: e.code,
      })),
    } as Payload<K, T>;
  }
}
