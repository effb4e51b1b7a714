import type { EventFacts, MailMessage } from '../../src/mail/messages/mail-message.js';

// Fixed sample data for every kind of mail: long names and an address that would overflow a phone on purpose.

export const SAMPLE_EVENT: EventFacts = {
  id: '7f3c2a10-5b9e-4d1a-9c4e-2f8b6a1d0e55',
  title: 'Community Hack Night: Accessible Maps & Open Transit Data',
  startsAt: new Date('2026-03-14T18:00:00Z'),
  endsAt: new Date('2026-03-14T21:30:00Z'),
  timeZone: 'Europe/Berlin',
  venue: 'Kulturbrauerei, Schönhauser Allee 36, 10435 Berlin, Haus 8, Raum Maschinenhaus-Galerie',
  onlineUrl: null,
  organizerName: 'Open Transit Berlin e.V.',
  url: 'https://agora.example.com/events/7f3c2a10-5b9e-4d1a-9c4e-2f8b6a1d0e55',
  calendarHost: 'agora.example.com',
  sequence: 1773000000,
};

const recipient = { name: 'Katherine Coleman Goble Johnson', email: 'katherine.johnson@flight-research.example.com' };
const registration = { reference: 'K7QF-93XD', quantity: 2, ticketTypeName: 'General admission' };
const manageUrl = 'https://agora.example.com/registrations/K7QF-93XD';
const attendees = [
  {
    name: 'Katherine Coleman Goble Johnson',
    ticketCode: `eyJhbGciOiJSUzI1NiIsInR5cCI6ImFnb3JhLXRpY2tldCtqd3QifQ.${'A'.repeat(180)}.${'s'.repeat(342)}`,
  },
  { name: 'Dorothy Vaughan', ticketCode: `eyJhbGciOiJSUzI1NiIsInR5cCI6ImFnb3JhLXRpY2tldCtqd3QifQ.${'B'.repeat(180)}.${'t'.repeat(342)}` },
];

/** One sample of every kind, in the order docs/mail.md lists them. */
export const SAMPLE_MAILS: MailMessage[] = [
  { kind: 'registration.confirmed', recipient, event: SAMPLE_EVENT, registration, attendees, manageUrl },
  { kind: 'registration.waitlisted', recipient, event: SAMPLE_EVENT, registration, manageUrl },
  { kind: 'registration.promoted', recipient, event: SAMPLE_EVENT, registration, attendees, manageUrl },
  { kind: 'registration.cancelled', recipient, event: SAMPLE_EVENT, registration, by: 'attendee', manageUrl },
  {
    kind: 'event.changed',
    recipient,
    event: { ...SAMPLE_EVENT, startsAt: new Date('2026-03-21T17:00:00Z'), endsAt: new Date('2026-03-21T20:00:00Z'), sequence: 1773100000 },
    changes: [
      {
        field: 'time',
        before: { startsAt: SAMPLE_EVENT.startsAt, endsAt: SAMPLE_EVENT.endsAt },
        after: { startsAt: new Date('2026-03-21T17:00:00Z'), endsAt: new Date('2026-03-21T20:00:00Z') },
      },
      { field: 'venue', before: 'Betahaus, Rudi-Dutschke-Straße 23', after: SAMPLE_EVENT.venue },
    ],
    manageUrl,
  },
  { kind: 'event.cancelled', recipient, event: SAMPLE_EVENT, registration, manageUrl },
  {
    kind: 'event.reminder',
    recipient,
    event: SAMPLE_EVENT,
    registration,
    attendees,
    manageUrl,
    unsubscribeUrl: 'https://agora.example.com/mail/unsubscribe?token=agora_unsub_9f86d081884c7d659a2feaa0c55ad015',
  },
];
