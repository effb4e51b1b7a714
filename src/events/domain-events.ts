/**
 * What happens in the events domain that integrators can subscribe to (webhooks: docs/webhooks.md). The
 * events domain writes these with the change itself (WebhookOutbox); src/webhooks/ delivers them.
 */
export const DOMAIN_EVENT_TYPES = [
  'registration.created',
  'registration.confirmed',
  'registration.waitlisted',
  'registration.promoted',
  'registration.cancelled',
  'attendee.checked_in',
  'attendee.check_in_undone',
  'event.published',
  'event.changed',
  'event.cancelled',
] as const;

export type DomainEventType = (typeof DOMAIN_EVENT_TYPES)[number];

export function isDomainEventType(value: string): value is DomainEventType {
  return (DOMAIN_EVENT_TYPES as readonly string[]).includes(value);
}

/** One sentence per type, as the dashboard and docs/webhooks.md show it. */
export const DOMAIN_EVENT_DESCRIPTIONS: Record<DomainEventType, string> = {
  'registration.created': 'Someone registered for an event (confirmed or waitlisted follows at once).',
  'registration.confirmed': 'A registration got its seats.',
  'registration.waitlisted': 'A registration was put on the waitlist: the event or ticket type was full.',
  'registration.promoted': 'A waitlisted registration got its seats after others cancelled or capacity grew.',
  'registration.cancelled': 'A registration was cancelled by the attendee, the organizer or the event’s cancellation.',
  'attendee.checked_in': 'An attendee was checked in at the door.',
  'attendee.check_in_undone': 'An attendee’s check-in was undone.',
  'event.published': 'A draft event was published.',
  'event.changed': 'A published event’s details changed (time, venue, capacity, description…).',
  'event.cancelled': 'A published event was cancelled.',
};

/**
 * What happened, as ids (uuids): the subject and what it belongs to. Never more: a receiver fetches the
 * current state through the API with its own access (pretix's shape).
 */
export interface DomainEvent {
  type: DomainEventType;
  /** When it happened (ISO 8601), the clock of the change. */
  occurredAt: string;
  organizerId: string;
  eventId: string;
  /** registration.* and attendee.*: the registration. */
  registrationId?: string;
  /** attendee.*: the attendee. */
  attendeeId?: string;
  /** registration.* and attendee.*: who registered (an application endpoint hears of it when this user authorized it). */
  userId?: string;
}
