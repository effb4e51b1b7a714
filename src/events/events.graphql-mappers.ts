import { toConnection } from '../graphql/connection.js';
import { idOfType, NodeType, toGlobalId } from '../graphql/global-id.js';
import type { Page } from '../database/keyset.js';
import { EventError } from './events.errors.js';
import {
  COUNT,
  MODEL,
  type GqlAttendee,
  type GqlEvent,
  type GqlEventConnection,
  type GqlMember,
  type GqlOrganizer,
  type GqlRegistration,
  type GqlTicketType,
  type Shown,
} from './events.graphql-parents.js';
import type { Attendee, Event, Organizer, OrganizerMember, Registration, TicketType } from './events.model.js';

/*
 * The GraphQL edge's view of the events domain: each object is its domain model, copied, with what the
 * schema shows differently (global IDs, enum names, computed fields) put over it, and the model itself
 * kept under MODEL (their types: `events.graphql-parents.ts`). A field the schema names like the model
 * needs nothing here: a column added to an entity reaches GraphQL once the `.graphql` file has it.
 */

const upper = <T extends string>(value: string): T => value.toUpperCase() as T;
/** A GraphQL enum value as the domain spells it: `IN_PERSON` → `in_person`. */
export const lower = <T extends string>(value: string): T => value.toLowerCase() as T;

/**
 * `(model) => ({ ...model, ...computed(model), [MODEL]: model })`, compiled into one object literal on
 * the first model it sees (models of a type all have their table's properties, in its order): spreading
 * a model of 20-odd fields and overriding some cost 3–4 µs an object, and a page of 50 events with their
 * ticket types made a hundred of them. The names come from the models' own keys, as JSON string literals.
 */
export function shown<M extends object, Over extends Record<string, unknown>>(computed: { [K in keyof Over]: (model: M) => Over[K] }): (
  model: M,
) => Shown<M, Over> {
  let build: ((model: M) => Shown<M, Over>) | undefined;
  return (model) => (build ??= compileShown(model, computed))(model);
}

function compileShown<M extends object, Over>(
  sample: M,
  computed: { [K in keyof Over]: (model: M) => Over[K] },
): (model: M) => Shown<M, Over> {
  const names = Object.keys(computed);
  const copied = Object.keys(sample).filter((key) => !names.includes(key));
  const fields = [
    ...copied.map((key) => `${JSON.stringify(key)}: m[${JSON.stringify(key)}]`),
    ...names.map((name) => `${JSON.stringify(name)}: c[${JSON.stringify(name)}](m)`),
    '[MODEL]: m',
  ];
  const literal = new Function('m', 'c', 'MODEL', `return { ${fields.join(', ')} };`) as (
    m: M,
    c: typeof computed,
    key: symbol,
  ) => Shown<M, Over>;
  return (model) => literal(model, computed, MODEL);
}

export const toGqlOrganizer = shown<Organizer, Pick<GqlOrganizer, 'id'>>({ id: (o) => toGlobalId('Organizer', o.id) });

export const toGqlEvent = shown<Event, Pick<GqlEvent, 'id' | 'format' | 'status' | 'visibility' | 'spotsLeft'>>({
  id: (e) => toGlobalId('Event', e.id),
  format: (e) => upper(e.format),
  spotsLeft: (e) => (e.capacity === null ? null : e.capacity - e.confirmedSeats),
  status: (e) => upper(e.status),
  visibility: (e) => upper(e.visibility),
});

export function toGqlEventConnection(page: Page<Event>, count: () => Promise<number>): GqlEventConnection {
  // Not spread: that would read the connection's lazy `edges` and build them.
  return Object.assign(toConnection(page, toGqlEvent), { [COUNT]: count });
}

export const toGqlTicketType = shown<TicketType, Pick<GqlTicketType, 'id' | 'price' | 'remaining'>>({
  id: (t) => toGlobalId('TicketType', t.id),
  price: (t) => ({ amount: t.priceAmount, currency: t.priceCurrency }),
  remaining: (t) => (t.quantity === null ? null : t.quantity - t.sold),
});

export const toGqlRegistration = shown<Registration, Pick<GqlRegistration, 'id' | 'referenceCode' | 'status' | 'cancelledBy'>>({
  id: (r) => toGlobalId('Registration', r.id),
  referenceCode: (r) => r.reference,
  status: (r) => upper(r.status),
  cancelledBy: (r) => (r.cancelledBy ? upper(r.cancelledBy) : null),
});

export const toGqlAttendee = shown<Attendee, Pick<GqlAttendee, 'id'>>({ id: (a) => toGlobalId('Attendee', a.id) });

export const toGqlMember = shown<OrganizerMember, Pick<GqlMember, 'role'>>({ role: (m) => upper(m.role) });

/** The uuid behind a global ID given in an input; an ID of another type or of nothing is not found. */
export function requireId(globalId: string, type: NodeType, field: string): string {
  const id = idOfType(globalId, type);
  if (!id) throw EventError.notFound(type, field);
  return id;
}
