import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Clock } from '../clock/clock.js';
import { UsersService } from '../users/users.service.js';
import type { EventFormatValue, EventVisibilityValue } from './events.model.js';
import { EventsReaderFactory } from './events.reader.js';
import { EventsService } from './events.service.js';
import { OrganizersService } from './organizers.service.js';
import { RegistrationsService } from './registrations.service.js';
import { TicketTypesService } from './ticket-types.service.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

interface DemoEvent {
  title: string;
  /** Days from now (negative: in the past), local start time in the event's time zone, and length in hours. */
  inDays: number;
  at: `${number}:${number}`;
  hours: number;
  timeZone: string;
  format: EventFormatValue;
  venue?: { name: string; address: string; city: string; country: string };
  capacity?: number;
  visibility?: EventVisibilityValue;
  tickets: { name: string; amount: number; currency: string; quantity?: number; hidden?: boolean }[];
  /** How many demo attendees register, in order. */
  registrations: number;
  draft?: boolean;
}

const ORGANIZERS: { slug: string; name: string; description: string; websiteUrl: string; events: DemoEvent[] }[] = [
  {
    slug: 'demo-paris-rust',
    name: 'Paris Rust Meetup',
    description: 'Monthly talks and workshops about Rust, in Paris and online.',
    websiteUrl: 'https://example.com/paris-rust',
    events: [
      {
        title: 'Rust & Coffee: async in practice',
        inDays: 3,
        at: '09:00',
        hours: 2,
        timeZone: 'Europe/Paris',
        format: 'hybrid',
        venue: { name: 'La Gaîté Lyrique', address: '3bis rue Papin', city: 'Paris', country: 'FR' },
        capacity: 4,
        tickets: [
          { name: 'General admission', amount: 0, currency: 'EUR' },
          { name: 'Speaker', amount: 0, currency: 'EUR', hidden: true },
        ],
        registrations: 6,
      },
      {
        title: 'Embedded Rust workshop',
        inDays: 17,
        at: '10:00',
        hours: 6,
        timeZone: 'Europe/Paris',
        format: 'in_person',
        venue: { name: 'Station F', address: '5 parvis Alan Turing', city: 'Paris', country: 'FR' },
        capacity: 30,
        tickets: [
          { name: 'Early bird', amount: 1500, currency: 'EUR', quantity: 10 },
          { name: 'Regular', amount: 2500, currency: 'EUR' },
        ],
        registrations: 3,
      },
      {
        title: 'Rust in 2027: planning session',
        inDays: 40,
        at: '19:00',
        hours: 2,
        timeZone: 'Europe/Paris',
        format: 'online',
        tickets: [{ name: 'Free', amount: 0, currency: 'EUR' }],
        registrations: 0,
        draft: true,
      },
      {
        title: 'Rust meetup: retrospective',
        inDays: -20,
        at: '18:30',
        hours: 2,
        timeZone: 'Europe/Paris',
        format: 'in_person',
        venue: { name: 'Le Wagon', address: '16 villa Gaudelet', city: 'Paris', country: 'FR' },
        tickets: [{ name: 'Free', amount: 0, currency: 'EUR' }],
        registrations: 0,
      },
    ],
  },
  {
    slug: 'demo-global-devs',
    name: 'Global Developers Circle',
    description: 'Conferences and online sessions across time zones.',
    websiteUrl: 'https://example.com/global-devs',
    events: [
      {
        title: 'Tokyo Web Performance Night',
        inDays: 9,
        at: '18:30',
        hours: 3,
        timeZone: 'Asia/Tokyo',
        format: 'in_person',
        venue: { name: 'Shibuya Stream Hall', address: '3-21-3 Shibuya', city: 'Tokyo', country: 'JP' },
        capacity: 120,
        tickets: [{ name: 'Standard', amount: 3000, currency: 'JPY' }],
        registrations: 2,
      },
      {
        title: 'New York GraphQL Summit',
        inDays: 30,
        at: '09:00',
        hours: 8,
        timeZone: 'America/New_York',
        format: 'hybrid',
        venue: { name: 'Javits Center', address: '429 11th Ave', city: 'New York', country: 'US' },
        capacity: 500,
        tickets: [
          { name: 'Conference pass', amount: 29900, currency: 'USD', quantity: 400 },
          { name: 'Online pass', amount: 4900, currency: 'USD' },
        ],
        registrations: 4,
      },
      {
        title: 'São Paulo Open Source Day',
        inDays: 55,
        at: '10:00',
        hours: 7,
        timeZone: 'America/Sao_Paulo',
        format: 'in_person',
        venue: { name: 'Centro Cultural São Paulo', address: 'Rua Vergueiro 1000', city: 'São Paulo', country: 'BR' },
        capacity: 200,
        tickets: [{ name: 'Entrada', amount: 0, currency: 'BRL' }],
        registrations: 1,
      },
      {
        title: 'Sydney Cloud Native Breakfast',
        inDays: 12,
        at: '08:00',
        hours: 2,
        timeZone: 'Australia/Sydney',
        format: 'online',
        capacity: 80,
        visibility: 'unlisted',
        tickets: [{ name: 'Free', amount: 0, currency: 'AUD' }],
        registrations: 1,
      },
    ],
  },
];

export interface DemoSeedResult {
  seeded: boolean;
  message: string;
  organizers?: string[];
  events?: number;
  users?: { username: string; role: string }[];
  password?: string;
}

/**
 * Fills the database with a small, realistic demo through the services, so the same rules apply. Run it
 * in one transaction (the CLI's seed:demo does): only then does finding the first organizer mean that
 * the whole demo is there.
 */
@Injectable()
export class DemoSeeder {
  constructor(
    private readonly users: UsersService,
    private readonly organizers: OrganizersService,
    private readonly events: EventsService,
    private readonly ticketTypes: TicketTypesService,
    private readonly registrations: RegistrationsService,
    private readonly readers: EventsReaderFactory,
    private readonly clock: Clock,
  ) {}

  async run(password = randomBytes(12).toString('base64url')): Promise<DemoSeedResult> {
    if (await this.organizers.findBySlug(ORGANIZERS[0]!.slug)) {
      return { seeded: false, message: 'The demo data is already there; nothing was changed.' };
    }
    const suffix = randomBytes(2).toString('hex');
    const organizerUser = await this.users.create(
      {
        username: `demo-organizer-${suffix}`,
        email: `demo-organizer-${suffix}@example.com`,
        name: 'Dana Organizer',
        password,
      },
      { emailVerified: true },
    );
    const attendees = [];
    for (const [i, name] of [
      'Ada Lovelace',
      'Alan Turing',
      'Grace Hopper',
      'Edsger Dijkstra',
      'Barbara Liskov',
      'Ken Thompson',
    ].entries()) {
      attendees.push(
        await this.users.create(
          {
            username: `demo-attendee-${i + 1}-${suffix}`,
            email: `demo-attendee-${i + 1}-${suffix}@example.com`,
            name,
            password,
          },
          { emailVerified: true },
        ),
      );
    }
    const owner = this.readers.create(organizerUser.id);
    const now = this.clock.now().getTime();
    let events = 0;
    for (const spec of ORGANIZERS) {
      const organizer = await this.organizers.create(organizerUser.id, {
        slug: spec.slug,
        name: spec.name,
        description: spec.description,
        websiteUrl: spec.websiteUrl,
      });
      for (const e of spec.events) {
        const startsAt = localTime(new Date(now + e.inDays * DAY), e.at, e.timeZone);
        const event = await this.events.create(owner, {
          organizerId: organizer.id,
          title: e.title,
          startsAt,
          endsAt: new Date(startsAt.getTime() + e.hours * HOUR),
          timeZone: e.timeZone,
          format: e.format,
          venue: e.venue ?? null,
          onlineUrl: e.format === 'in_person' ? null : `https://meet.example.com/${slugOf(e.title)}`,
          capacity: e.capacity ?? null,
          visibility: e.visibility ?? 'public',
          description: `${e.title}, organized by ${spec.name}. A demo event created by \`npm run cli -- seed:demo\`.`,
        });
        const tickets = [];
        for (const t of e.tickets) {
          tickets.push(
            await this.ticketTypes.create(owner, event.id, {
              name: t.name,
              price: { amount: t.amount, currency: t.currency },
              quantity: t.quantity ?? null,
              hidden: t.hidden ?? false,
            }),
          );
        }
        events++;
        if (e.draft) continue;
        // Past events are published too, so the listing shows ended ones; nobody registers for them.
        await this.events.publish(owner, event.id);
        if (e.inDays < 0) continue;
        for (const attendee of attendees.slice(0, e.registrations)) {
          await this.registrations.register(this.readers.create(attendee.id), {
            eventId: event.id,
            ticketTypeId: tickets[0]!.id,
            attendees: [{ name: attendee.name, email: attendee.email }],
          });
        }
      }
    }
    return {
      seeded: true,
      message: 'Demo data created. Try: { events(first: 10) { nodes { title startsAt timeZone organizer { name } } } }',
      organizers: ORGANIZERS.map((o) => o.slug),
      events,
      users: [
        { username: organizerUser.username, role: 'owner of both organizers' },
        ...attendees.map((a) => ({ username: a.username, role: 'attendee' })),
      ],
      password,
    };
  }
}

function slugOf(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** The instant it is `at` (HH:MM) in `timeZone` on the day `day` falls on there. */
export function localTime(day: Date, at: string, timeZone: string): Date {
  const [hour, minute] = at.split(':').map(Number) as [number, number];
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' })
      .formatToParts(day)
      .map((p) => [p.type, p.value]),
  );
  // That wall-clock time read as UTC, then moved by the zone's offset there (twice: the offset at the
  // first guess may differ from the one at the answer across a daylight saving change).
  const wall = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), hour, minute);
  let instant = wall - offsetMs(new Date(wall), timeZone);
  instant = wall - offsetMs(new Date(instant), timeZone);
  return new Date(instant);
}

/** How far `timeZone` is ahead of UTC at `instant`. */
function offsetMs(instant: Date, timeZone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
      .formatToParts(instant)
      .map((p) => [p.type, p.value]),
  );
  const asUtc = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  return asUtc - Math.floor(instant.getTime() / 1000) * 1000;
}
