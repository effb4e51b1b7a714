import { DomainError, failuresOf } from '../errors/domain-error.js';
import { Connection, toConnection } from '../graphql/connection.js';
import { idOfType, NodeType, toGlobalId } from '../graphql/global-id.js';
import type { Page } from '../database/keyset.js';
import type * as G from '../graphql/graphql.schema.js';
import { EventError } from './events.errors.js';
import type { Attendee, Event, Organizer, OrganizerMember, Registration, TicketType } from './events.model.js';

/**
 * The GraphQL edge's view of the events domain: each object is its domain model, spread, with what the
 * schema shows differently (global IDs, enum names, computed fields) put over it, and the model itself
 * kept under MODEL for the field resolvers of its relations. A field the schema names like the model
 * needs nothing here: a column added to an entity reaches GraphQL once the `.graphql` file has it.
 * These are the parent types of the generated resolver types (scripts/codegen.mjs, `mappers`).
 */
export const MODEL = Symbol('model');

type Shown<M, Over> = Omit<M, keyof Over> & Over & { [MODEL]: M };

export type GqlOrganizer = Shown<Organizer, Pick<G.Organizer, 'id'>>;
export type GqlEvent = Shown<Event, Pick<G.Event, 'id' | 'format' | 'status' | 'visibility' | 'spotsLeft'>>;
export type GqlTicketType = Shown<TicketType, Pick<G.TicketType, 'id' | 'price' | 'remaining'>>;
export type GqlRegistration = Shown<Registration, Pick<G.Registration, 'id' | 'referenceCode' | 'status'>>;
export type GqlAttendee = Shown<Attendee, Pick<G.Attendee, 'id'>>;
export type GqlMember = Shown<OrganizerMember, Pick<G.OrganizerMember, 'role'>>;

const upper = <T extends string>(value: string): T => value.toUpperCase() as T;
/** A GraphQL enum value as the domain spells it: `IN_PERSON` → `in_person`. */
export const lower = <T extends string>(value: string): T => value.toLowerCase() as T;

export function toGqlOrganizer(o: Organizer): GqlOrganizer {
  return { ...o, id: toGlobalId('Organizer', o.id), [MODEL]: o };
}

export function toGqlEvent(e: Event): GqlEvent {
  return {
    ...e,
    id: toGlobalId('Event', e.id),
    format: upper(e.format),
    spotsLeft: e.capacity === null ? null : e.capacity - e.confirmedSeats,
    status: upper(e.status),
    visibility: upper(e.visibility),
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
    ...t,
    id: toGlobalId('TicketType', t.id),
    price: { amount: t.priceAmount, currency: t.priceCurrency },
    remaining: t.quantity === null ? null : t.quantity - t.sold,
    [MODEL]: t,
  };
}

export function toGqlRegistration(r: Registration): GqlRegistration {
  return { ...r, id: toGlobalId('Registration', r.id), referenceCode: r.reference, status: upper(r.status), [MODEL]: r };
}

export function toGqlAttendee(a: Attendee): GqlAttendee {
  return { ...a, id: toGlobalId('Attendee', a.id), [MODEL]: a };
}

export function toGqlMember(m: OrganizerMember): GqlMember {
  return { ...m, role: upper(m.role), [MODEL]: m };
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
