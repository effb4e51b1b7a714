import type { DomainEvent } from '../events/domain-events.js';
import { toGlobalId } from '../graphql/global-id.js';

/** The type of the message "send a test event" sends. */
export const TEST_EVENT_TYPE = 'webhook.test';

/**
 * The exact body of a domain event's message (stored in webhook_messages.body, signed and sent as is):
 * the type, when it happened, and ids only, with the REST address to fetch the subject as it is now
 * (pretix's shape; docs/webhooks.md). A receiver reads nothing it could not read through the API.
 */
export function eventBody(event: DomainEvent, baseUrl: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  const subject = subjectOf(event);
  return JSON.stringify({
    type: event.type,
    timestamp: new Date(event.occurredAt).toISOString(),
    data: {
      object: subject.object,
      id: subject.id,
      organizer_id: toGlobalId('Organizer', event.organizerId),
      event_id: toGlobalId('Event', event.eventId),
      ...(event.registrationId !== undefined && { registration_id: toGlobalId('Registration', event.registrationId) }),
      ...(event.attendeeId !== undefined && { attendee_id: toGlobalId('Attendee', event.attendeeId) }),
      url: `${base}${subject.path}`,
    },
  });
}

/** The body of a test event to one endpoint. */
export function testBody(endpointId: string, at: Date): string {
  return JSON.stringify({
    type: TEST_EVENT_TYPE,
    timestamp: at.toISOString(),
    data: { endpoint_id: endpointId, message: 'A test event from Agora: your endpoint received and can verify it.' },
  });
}

function subjectOf(event: DomainEvent): { object: 'registration' | 'attendee' | 'event'; id: string; path: string } {
  if (event.type.startsWith('event.')) {
    return { object: 'event', id: toGlobalId('Event', event.eventId), path: `/api/events/${event.eventId}` };
  }
  const registrationId = required(event.registrationId, event, 'registrationId');
  if (event.type.startsWith('attendee.')) {
    // Attendees have no REST address of their own: their registration's lists them.
    const attendeeId = required(event.attendeeId, event, 'attendeeId');
    return { object: 'attendee', id: toGlobalId('Attendee', attendeeId), path: `/api/registrations/${registrationId}` };
  }
  return { object: 'registration', id: toGlobalId('Registration', registrationId), path: `/api/registrations/${registrationId}` };
}

function required(value: string | undefined, event: DomainEvent, field: string): string {
  if (value === undefined) throw new Error(`A ${event.type} domain event without ${field}`);
  return value;
}
