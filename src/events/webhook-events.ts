import type { DomainEvent, DomainEventType } from './domain-events.js';

/** What a domain event about a registration needs to name: the registration, its event and registrant. */
export interface RegistrationFacts {
  id: string;
  eventId: string;
  userId: string;
}

/** A registration.* event (`organizerId`: the organizer of the registration's event). */
export function registrationEvent(
  type: Extract<DomainEventType, `registration.${string}`>,
  at: Date,
  organizerId: string,
  registration: RegistrationFacts,
): DomainEvent {
  return { type, ...aboutRegistration(at, organizerId, registration) };
}

/** An attendee.* event: the attendee, and the registration it belongs to. */
export function attendeeEvent(
  type: Extract<DomainEventType, `attendee.${string}`>,
  at: Date,
  organizerId: string,
  registration: RegistrationFacts,
  attendeeId: string,
): DomainEvent {
  return { type, ...aboutRegistration(at, organizerId, registration), attendeeId };
}

/** What registration.* and attendee.* events say of the registration. */
function aboutRegistration(at: Date, organizerId: string, registration: RegistrationFacts): Omit<DomainEvent, 'type'> {
  return {
    occurredAt: at.toISOString(),
    organizerId,
    eventId: registration.eventId,
    registrationId: registration.id,
    userId: registration.userId,
  };
}

/** An event.* event. */
export function eventEvent(type: Extract<DomainEventType, `event.${string}`>, at: Date, organizerId: string, eventId: string): DomainEvent {
  return { type, occurredAt: at.toISOString(), organizerId, eventId };
}
