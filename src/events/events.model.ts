import type { AttendeeEntity } from './attendee.entity.js';
import type { EventEntity, EventFormatValue, EventStatusValue, EventVisibilityValue } from './event.entity.js';
import type { OrganizerMemberEntity, OrganizerRoleValue } from './organizer-member.entity.js';
import type { OrganizerEntity } from './organizer.entity.js';
import type { CancelledByValue, RegistrationEntity, RegistrationStatusValue } from './registration.entity.js';
import type { TicketTypeEntity } from './ticket-type.entity.js';

/**
 * What the events services return: API shapes that both edges (GraphQL, REST) map from. Each is the
 * stored fields of its entity (`event-tables.ts` reads every column of it), so a field is declared
 * once, in the entity; the edges choose what they show.
 */

/** The stored fields of an entity: its columns, without its relations (objects other than dates). */
export type Row<T> = {
  [K in keyof T as NonNullable<T[K]> extends Date ? K : NonNullable<T[K]> extends object ? never : K]: T[K];
};

export type Organizer = Row<OrganizerEntity>;
export type OrganizerMember = Row<OrganizerMemberEntity>;

export interface Venue {
  name: string;
  address: string | null;
  city: string | null;
  country: string | null;
}

/** The venue_* columns, read as one `venue` (null without a venue name). */
type VenueColumns = 'venueName' | 'venueAddress' | 'venueCity' | 'venueCountry';

export type Event = Omit<Row<EventEntity>, VenueColumns> & { venue: Venue | null };
export type TicketType = Row<TicketTypeEntity>;
export type Registration = Row<RegistrationEntity>;
export type Attendee = Row<AttendeeEntity>;

export type { CancelledByValue, EventFormatValue, EventStatusValue, EventVisibilityValue, OrganizerRoleValue, RegistrationStatusValue };
