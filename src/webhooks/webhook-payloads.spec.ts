import { fromGlobalId } from '../graphql/global-id.js';
import { eventBody, testBody } from './webhook-payloads.js';

const ids = {
  organizerId: '0b6c3f2e-8a41-4c38-9d55-0e2f7d7f1a01',
  eventId: '1c7d4a3f-9b52-4d49-8e66-1f3a8e8a2b02',
  registrationId: '2d8e5b4a-ac63-4e5a-9f77-2a4b9f9b3c03',
  attendeeId: '3e9f6c5b-bd74-4f6b-8a88-3b5caaac4d04',
  userId: '4fa07d6c-ce85-4a7c-9b99-4c6dbbbd5e05',
};

describe('webhook message bodies', () => {
  it('names a registration by its global id, with its organizer, event and REST address, nothing more', () => {
    const body = eventBody(
      { type: 'registration.confirmed', occurredAt: '2026-03-01T10:00:00.000Z', ...ids, attendeeId: undefined },
      'https://agora.example.com/',
    );
    expect(JSON.parse(body)).toEqual({
      type: 'registration.confirmed',
      timestamp: '2026-03-01T10:00:00.000Z',
      data: {
        object: 'registration',
        id: expect.any(String),
        organizer_id: expect.any(String),
        event_id: expect.any(String),
        registration_id: expect.any(String),
        url: `https://agora.example.com/api/registrations/${ids.registrationId}`,
      },
    });
    const data = JSON.parse(body).data;
    expect(fromGlobalId(data.id)).toEqual({ type: 'Registration', id: ids.registrationId });
    expect(fromGlobalId(data.organizer_id)).toEqual({ type: 'Organizer', id: ids.organizerId });
    expect(fromGlobalId(data.event_id)).toEqual({ type: 'Event', id: ids.eventId });
    expect(body).not.toContain(ids.userId);
  });

  it('points an attendee at its registration’s REST address', () => {
    const data = JSON.parse(
      eventBody({ type: 'attendee.checked_in', occurredAt: '2026-03-01T10:00:00Z', ...ids }, 'https://a.example'),
    ).data;
    expect(data.object).toBe('attendee');
    expect(fromGlobalId(data.id)).toEqual({ type: 'Attendee', id: ids.attendeeId });
    expect(fromGlobalId(data.attendee_id)).toEqual({ type: 'Attendee', id: ids.attendeeId });
    expect(data.url).toBe(`https://a.example/api/registrations/${ids.registrationId}`);
  });

  it('names an event by its own address, without registration fields', () => {
    const data = JSON.parse(
      eventBody(
        { type: 'event.cancelled', occurredAt: '2026-03-01T10:00:00Z', organizerId: ids.organizerId, eventId: ids.eventId },
        'https://a.example',
      ),
    ).data;
    expect(data).toEqual({
      object: 'event',
      id: data.event_id,
      organizer_id: expect.any(String),
      event_id: expect.any(String),
      url: `https://a.example/api/events/${ids.eventId}`,
    });
  });

  it('says what a test event is and which endpoint it was sent to', () => {
    expect(JSON.parse(testBody(ids.eventId, new Date('2026-03-01T10:00:00Z')))).toEqual({
      type: 'webhook.test',
      timestamp: '2026-03-01T10:00:00.000Z',
      data: { endpoint_id: ids.eventId, message: expect.stringMatching(/test event/) },
    });
  });
});
