
/*
 * -------------------------------------------------------
 * THIS FILE WAS AUTOMATICALLY GENERATED (DO NOT MODIFY)
 * -------------------------------------------------------
 */

/* tslint:disable */
/* eslint-disable */

// Run `npm run codegen` after changing schema.graphql; CI fails when this file is stale.

export enum OrganizerRole {
    OWNER = "OWNER",
    ADMIN = "ADMIN",
    CHECK_IN_STAFF = "CHECK_IN_STAFF"
}

export enum EventFormat {
    IN_PERSON = "IN_PERSON",
    ONLINE = "ONLINE",
    HYBRID = "HYBRID"
}

export enum EventStatus {
    DRAFT = "DRAFT",
    PUBLISHED = "PUBLISHED",
    CANCELLED = "CANCELLED"
}

export enum EventPhase {
    UPCOMING = "UPCOMING",
    ONGOING = "ONGOING",
    ENDED = "ENDED"
}

export enum EventVisibility {
    PUBLIC = "PUBLIC",
    UNLISTED = "UNLISTED",
    PRIVATE = "PRIVATE"
}

export enum EventOrderField {
    STARTS_AT = "STARTS_AT"
}

export enum OrderDirection {
    ASC = "ASC",
    DESC = "DESC"
}

export enum RegistrationStatus {
    CONFIRMED = "CONFIRMED",
    WAITLISTED = "WAITLISTED",
    CANCELLED = "CANCELLED"
}

export interface UpdateViewerProfileInput {
    name: string;
}

export interface EventFilter {
    startsAfter?: Nullable<DateTime>;
    startsBefore?: Nullable<DateTime>;
    organizerSlug?: Nullable<string>;
    search?: Nullable<string>;
}

export interface EventOrder {
    field: EventOrderField;
    direction: OrderDirection;
}

export interface CreateOrganizerInput {
    slug: string;
    name: string;
    description?: Nullable<string>;
    websiteUrl?: Nullable<string>;
}

export interface UpdateOrganizerInput {
    organizerId: string;
    name?: Nullable<string>;
    description?: Nullable<string>;
    websiteUrl?: Nullable<string>;
}

export interface AddOrganizerMemberInput {
    organizerId: string;
    username: string;
    role: OrganizerRole;
}

export interface UpdateOrganizerMemberInput {
    organizerId: string;
    username: string;
    role: OrganizerRole;
}

export interface RemoveOrganizerMemberInput {
    organizerId: string;
    username: string;
}

export interface VenueInput {
    name: string;
    address?: Nullable<string>;
    city?: Nullable<string>;
    country?: Nullable<string>;
}

export interface CreateEventInput {
    organizerId: string;
    title: string;
    slug?: Nullable<string>;
    description?: Nullable<string>;
    startsAt: DateTime;
    endsAt: DateTime;
    timeZone: string;
    format: EventFormat;
    venue?: Nullable<VenueInput>;
    onlineUrl?: Nullable<string>;
    capacity?: Nullable<number>;
    visibility?: Nullable<EventVisibility>;
}

export interface UpdateEventInput {
    eventId: string;
    title?: Nullable<string>;
    slug?: Nullable<string>;
    description?: Nullable<string>;
    startsAt?: Nullable<DateTime>;
    endsAt?: Nullable<DateTime>;
    timeZone?: Nullable<string>;
    format?: Nullable<EventFormat>;
    venue?: Nullable<VenueInput>;
    onlineUrl?: Nullable<string>;
    capacity?: Nullable<number>;
    visibility?: Nullable<EventVisibility>;
}

export interface EventIdInput {
    eventId: string;
}

export interface MoneyInput {
    amount: number;
    currency: string;
}

export interface CreateTicketTypeInput {
    eventId: string;
    name: string;
    description?: Nullable<string>;
    price: MoneyInput;
    quantity?: Nullable<number>;
    salesStartAt?: Nullable<DateTime>;
    salesEndAt?: Nullable<DateTime>;
    hidden?: Nullable<boolean>;
    minPerOrder?: Nullable<number>;
    maxPerOrder?: Nullable<number>;
}

export interface UpdateTicketTypeInput {
    ticketTypeId: string;
    name?: Nullable<string>;
    description?: Nullable<string>;
    price?: Nullable<MoneyInput>;
    quantity?: Nullable<number>;
    salesStartAt?: Nullable<DateTime>;
    salesEndAt?: Nullable<DateTime>;
    hidden?: Nullable<boolean>;
    minPerOrder?: Nullable<number>;
    maxPerOrder?: Nullable<number>;
}

export interface DeleteTicketTypeInput {
    ticketTypeId: string;
}

export interface AttendeeInput {
    name: string;
    email: string;
}

export interface RegisterForEventInput {
    eventId: string;
    ticketTypeId: string;
    attendees: AttendeeInput[];
}

export interface CancelRegistrationInput {
    registrationId: string;
}

export interface CheckInAttendeeInput {
    attendeeId: string;
}

export interface Node {
    id: string;
}

export interface IQuery {
    viewer: User;
    user?: Nullable<User>;
    node?: Nullable<Node>;
    events: EventConnection;
    event?: Nullable<Event>;
    organizer?: Nullable<Organizer>;
}

export interface IMutation {
    updateViewerProfile: UpdateViewerProfilePayload;
    createOrganizer: CreateOrganizerPayload;
    updateOrganizer: UpdateOrganizerPayload;
    addOrganizerMember: OrganizerMemberPayload;
    updateOrganizerMember: OrganizerMemberPayload;
    removeOrganizerMember: RemoveOrganizerMemberPayload;
    createEvent: EventPayload;
    updateEvent: EventPayload;
    publishEvent: EventPayload;
    cancelEvent: EventPayload;
    deleteEvent: DeleteEventPayload;
    createTicketType: TicketTypePayload;
    updateTicketType: TicketTypePayload;
    deleteTicketType: DeleteTicketTypePayload;
    registerForEvent: RegistrationPayload;
    cancelRegistration: RegistrationPayload;
    checkInAttendee: CheckInAttendeePayload;
}

export interface User {
    id: string;
    username: string;
    name: string;
    registrations?: Nullable<RegistrationConnection>;
    organizerMemberships?: Nullable<OrganizerMemberConnection>;
}

export interface UpdateViewerProfilePayload {
    user?: Nullable<User>;
    userErrors: UserError[];
}

export interface UserError {
    field?: Nullable<string[]>;
    message: string;
    code: string;
}

export interface PageInfo {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor?: Nullable<string>;
    endCursor?: Nullable<string>;
}

export interface Organizer extends Node {
    id: string;
    slug: string;
    name: string;
    description: string;
    websiteUrl?: Nullable<string>;
    createdAt: DateTime;
    viewerRole?: Nullable<OrganizerRole>;
    events: EventConnection;
    members?: Nullable<OrganizerMemberConnection>;
}

export interface OrganizerMember {
    organizer: Organizer;
    user: User;
    role: OrganizerRole;
    createdAt: DateTime;
}

export interface OrganizerMemberConnection {
    edges: OrganizerMemberEdge[];
    nodes: OrganizerMember[];
    pageInfo: PageInfo;
}

export interface OrganizerMemberEdge {
    cursor: string;
    node: OrganizerMember;
}

export interface Event extends Node {
    id: string;
    slug: string;
    title: string;
    description: string;
    startsAt: DateTime;
    endsAt: DateTime;
    timeZone: string;
    format: EventFormat;
    venue?: Nullable<Venue>;
    onlineUrl?: Nullable<string>;
    capacity?: Nullable<number>;
    spotsLeft?: Nullable<number>;
    status: EventStatus;
    phase: EventPhase;
    visibility: EventVisibility;
    publishedAt?: Nullable<DateTime>;
    organizer: Organizer;
    ticketTypes: TicketType[];
    viewerRegistration?: Nullable<Registration>;
    registrations?: Nullable<RegistrationConnection>;
}

export interface Venue {
    name: string;
    address?: Nullable<string>;
    city?: Nullable<string>;
    country?: Nullable<string>;
}

export interface EventConnection {
    edges: EventEdge[];
    nodes: Event[];
    pageInfo: PageInfo;
    totalCount: number;
}

export interface EventEdge {
    cursor: string;
    node: Event;
}

export interface TicketType extends Node {
    id: string;
    event: Event;
    name: string;
    description: string;
    price: Money;
    quantity?: Nullable<number>;
    remaining?: Nullable<number>;
    salesStartAt?: Nullable<DateTime>;
    salesEndAt?: Nullable<DateTime>;
    onSale: boolean;
    hidden: boolean;
    minPerOrder: number;
    maxPerOrder: number;
}

export interface Money {
    amount: number;
    currency: string;
}

export interface Registration extends Node {
    id: string;
    referenceCode: string;
    status: RegistrationStatus;
    event: Event;
    ticketType: TicketType;
    user: User;
    quantity: number;
    attendees: Attendee[];
    createdAt: DateTime;
    confirmedAt?: Nullable<DateTime>;
    cancelledAt?: Nullable<DateTime>;
}

export interface Attendee extends Node {
    id: string;
    name: string;
    email: string;
    registration: Registration;
    checkedInAt?: Nullable<DateTime>;
}

export interface RegistrationConnection {
    edges: RegistrationEdge[];
    nodes: Registration[];
    pageInfo: PageInfo;
}

export interface RegistrationEdge {
    cursor: string;
    node: Registration;
}

export interface CreateOrganizerPayload {
    organizer?: Nullable<Organizer>;
    userErrors: UserError[];
}

export interface UpdateOrganizerPayload {
    organizer?: Nullable<Organizer>;
    userErrors: UserError[];
}

export interface OrganizerMemberPayload {
    member?: Nullable<OrganizerMember>;
    userErrors: UserError[];
}

export interface RemoveOrganizerMemberPayload {
    organizer?: Nullable<Organizer>;
    userErrors: UserError[];
}

export interface EventPayload {
    event?: Nullable<Event>;
    userErrors: UserError[];
}

export interface DeleteEventPayload {
    deletedEventId?: Nullable<string>;
    userErrors: UserError[];
}

export interface TicketTypePayload {
    ticketType?: Nullable<TicketType>;
    userErrors: UserError[];
}

export interface DeleteTicketTypePayload {
    deletedTicketTypeId?: Nullable<string>;
    userErrors: UserError[];
}

export interface RegistrationPayload {
    registration?: Nullable<Registration>;
    userErrors: UserError[];
}

export interface CheckInAttendeePayload {
    attendee?: Nullable<Attendee>;
    userErrors: UserError[];
}

export type DateTime = Date | string;

export interface ISchema {
    Query: IQuery;
    Mutation: IMutation;
}

type Nullable<T> = T | null;
