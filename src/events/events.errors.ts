import { DomainError, DomainErrorKind } from '../errors/domain-error.js';
import { isUuid } from '../database/uuid.js';

const KIND = {
  // The input is malformed: shown beside the field.
  INVALID_SLUG: 'invalid',
  INVALID_NAME: 'invalid',
  INVALID_TITLE: 'invalid',
  INVALID_DESCRIPTION: 'invalid',
  INVALID_URL: 'invalid',
  INVALID_TIME_RANGE: 'invalid',
  INVALID_TIME_ZONE: 'invalid',
  INVALID_VENUE: 'invalid',
  INVALID_COUNTRY: 'invalid',
  INVALID_CAPACITY: 'invalid',
  INVALID_PRICE: 'invalid',
  INVALID_CURRENCY: 'invalid',
  INVALID_QUANTITY: 'invalid',
  INVALID_ORDER_LIMITS: 'invalid',
  INVALID_SALES_WINDOW: 'invalid',
  INVALID_ATTENDEES: 'invalid',
  INVALID_EMAIL: 'invalid',
  UNKNOWN_USER: 'invalid',
  ATTENDEE_OR_CODE_REQUIRED: 'invalid',
  INVALID_TICKET_CODE: 'invalid',
  // The input is fine but the current state refuses it.
  SLUG_TAKEN: 'conflict',
  ALREADY_MEMBER: 'conflict',
  LAST_OWNER: 'conflict',
  EVENT_NOT_DRAFT: 'conflict',
  EVENT_INCOMPLETE: 'conflict',
  EVENT_CANCELLED: 'conflict',
  EVENT_ENDED: 'conflict',
  REGISTRATION_CLOSED: 'conflict',
  CAPACITY_BELOW_CONFIRMED: 'conflict',
  QUANTITY_BELOW_SOLD: 'conflict',
  TOO_MANY_TICKET_TYPES: 'conflict',
  TICKET_TYPE_IN_USE: 'conflict',
  SALES_NOT_STARTED: 'conflict',
  SALES_ENDED: 'conflict',
  ALREADY_REGISTERED: 'conflict',
  ALREADY_CANCELLED: 'conflict',
  CHECKED_IN: 'conflict',
  WRONG_EVENT: 'conflict',
  NOT_CONFIRMED: 'conflict',
  // Nothing the caller may see has this id.
  ORGANIZER_NOT_FOUND: 'not_found',
  EVENT_NOT_FOUND: 'not_found',
  TICKET_TYPE_NOT_FOUND: 'not_found',
  REGISTRATION_NOT_FOUND: 'not_found',
  ATTENDEE_NOT_FOUND: 'not_found',
  MEMBER_NOT_FOUND: 'not_found',
  INVALID_GRACE_HOURS: 'invalid',
  OWNER_WITHOUT_SECOND_FACTOR: 'conflict',
  // The caller may see it but not do this.
  FORBIDDEN: 'forbidden',
  /** A member past the organizer's grace period without a second factor. */
  SECOND_FACTOR_REQUIRED: 'forbidden',
} as const satisfies Record<string, DomainErrorKind>;

export type EventErrorCode = keyof typeof KIND;

/** Every failure of the events domain, with a stable code; each edge maps the kind to its transport. */
export class EventError extends DomainError {
  constructor(code: EventErrorCode, message: string, field?: string) {
    super(KIND[code], code, message, field);
  }

  static notFound(what: 'Organizer' | 'Event' | 'TicketType' | 'Registration' | 'Attendee', field?: string): EventError {
    const code = (
      {
        Organizer: 'ORGANIZER_NOT_FOUND',
        Event: 'EVENT_NOT_FOUND',
        TicketType: 'TICKET_TYPE_NOT_FOUND',
        Registration: 'REGISTRATION_NOT_FOUND',
        Attendee: 'ATTENDEE_NOT_FOUND',
      } as const
    )[what];
    const label = what === 'TicketType' ? 'ticket type' : what.toLowerCase();
    return new EventError(code, `No ${label} with this id exists, or you may not see it.`, field);
  }

  /** A list only its owner reads (the viewer's registrations and memberships), asked of someone else. */
  static viewerOnly(what: string): EventError {
    return new EventError('FORBIDDEN', `Only ${what} of the authenticated user (viewer) can be read.`);
  }

  static forbidden(action: string): EventError {
    return new EventError('FORBIDDEN', `You do not have the role needed to ${action}.`);
  }

  /** A member held back by the organizer's second-factor requirement since `deadline`. */
  static secondFactorRequired(deadline: Date): EventError {
    return new EventError(
      'SECOND_FACTOR_REQUIRED',
      `This organizer requires a second factor of its team, and your grace period ended at ${deadline.toISOString()}: ` +
        'set up an authenticator app or a passkey on your account’s security page (/account/security) to act for it again.',
    );
  }
}

/**
 * An id given by a client (a path segment, a tool argument) that must be a uuid: anything else names
 * nothing, so it is not found, as an unknown uuid is; the uuid lower-cased otherwise.
 */
export function uuidOrNotFound(value: string, what: 'TicketType' | 'Registration' | 'Attendee', field?: string): string {
  if (!isUuid(value)) throw EventError.notFound(what, field);
  return value.toLowerCase();
}
