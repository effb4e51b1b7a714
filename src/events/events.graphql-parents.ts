import type * as G from '../generated/graphql.js';
import type { Connection } from '../graphql/connection.js';
import type { Attendee, Event, Organizer, OrganizerMember, Registration, TicketType } from './events.model.js';

/**
 * The parent types of the events domain's GraphQL objects (scripts/codegen.mjs, `mappers`): each is its
 * domain model with what the schema shows differently put over it, and the model itself under MODEL for
 * the field resolvers of its relations. The generated resolver types import this file, so it imports
 * the schema's types only (`src/generated/graphql.ts`); the mappers that build these are in
 * `events.graphql-mappers.ts`.
 */
export const MODEL = Symbol('model');

/** Counts an event connection's events; called by the `totalCount` field resolver, so only when selected. */
export const COUNT = Symbol('count');

export type Shown<M, Over> = Omit<M, keyof Over> & Over & { [MODEL]: M };

export type GqlOrganizer = Shown<Organizer, Pick<G.Organizer, 'id'>>;
export type GqlEvent = Shown<Event, Pick<G.Event, 'id' | 'format' | 'status' | 'visibility' | 'spotsLeft'>>;
export type GqlTicketType = Shown<TicketType, Pick<G.TicketType, 'id' | 'price' | 'remaining'>>;
export type GqlRegistration = Shown<Registration, Pick<G.Registration, 'id' | 'referenceCode' | 'status' | 'cancelledBy'>>;
export type GqlAttendee = Shown<Attendee, Pick<G.Attendee, 'id'>>;
export type GqlMember = Shown<OrganizerMember, Pick<G.OrganizerMember, 'role'>>;
export type GqlEventConnection = Connection<GqlEvent> & { [COUNT]: () => Promise<number> };
