import type { EventFormatValue, EventStatusValue, EventVisibilityValue } from './event.entity.js';
import type { OrganizerRoleValue } from './organizer-member.entity.js';
import type { RegistrationStatusValue } from './registration.entity.js';

/** What the events services return: API shapes that both edges (GraphQL, REST) map from. */

export interface Organizer {
  id: string;
  slug: string;
  name: string;
  description: string;
  websiteUrl: string | null;
  createdAt: Date;
}

export interface OrganizerMember {
  organizerId: string;
  userId: string;
  role: OrganizerRoleValue;
  createdAt: Date;
}

export interface Venue {
  name: string;
  address: string | null;
  city: string | null;
  country: string | null;
}

export interface Event {
  id: string;
  organizerId: string;
  slug: string;
  title: string;
  description: string;
  startsAt: Date;
  endsAt: Date;
  timeZone: string;
  format: EventFormatValue;
  venue: Venue | null;
  /** Not for every reader: edges show it only where `EventsPolicy.canSeeOnlineUrl` allows. */
  onlineUrl: string | null;
  capacity: number | null;
  confirmedSeats: number;
  status: EventStatusValue;
  visibility: EventVisibilityValue;
  publishedAt: Date | null;
  cancelledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface TicketType {
  id: string;
  eventId: string;
  name: string;
  description: string;
  priceAmount: number;
  priceCurrency: string;
  quantity: number | null;
  sold: number;
  salesStartAt: Date | null;
  salesEndAt: Date | null;
  hidden: boolean;
  minPerOrder: number;
  maxPerOrder: number;
  createdAt: Date;
}

export interface Registration {
  id: string;
  eventId: string;
  ticketTypeId: string;
  userId: string;
  reference: string;
  status: RegistrationStatusValue;
  quantity: number;
  createdAt: Date;
  confirmedAt: Date | null;
  cancelledAt: Date | null;
}

export interface Attendee {
  id: string;
  registrationId: string;
  name: string;
  email: string;
  position: number;
  checkedInAt: Date | null;
}

export type { EventFormatValue, EventStatusValue, EventVisibilityValue, OrganizerRoleValue, RegistrationStatusValue };
