import { DataSource } from 'typeorm';
import { PersonalTokensService } from '../../src/personal-tokens/personal-tokens.service.js';
import { graphql, GraphqlBody } from './http.js';
import { TestApp } from './test-app.js';
import { randomBytes } from 'node:crypto';
import { idOfType } from '../../src/graphql/global-id.js';

/** Request builders for the events domain over GraphQL, as a client would call it. */

const HOUR = 3600_000;
const DAY = 24 * HOUR;

export function uniqueSlug(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** Runs a mutation and returns its payload, failing loudly on request errors or userErrors. */
export async function mutate(t: TestApp, token: string, mutation: string, input: Record<string, unknown>, selection: string): Promise<any> {
  const res = await graphql(
    t.url,
    `mutation($input: ${inputType(mutation)}!) { ${mutation}(input: $input) { ${selection} userErrors { field message code } } }`,
    {
      privateToken: token,
      variables: { input },
    },
  );
  const payload = res.body.data?.[mutation];
  if (res.status !== 200 || res.body.errors || !payload || payload.userErrors.length) {
    throw new Error(`${mutation} failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return payload;
}

export function inputType(mutation: string): string {
  const special: Record<string, string> = {
    publishEvent: 'EventIdInput',
    cancelEvent: 'EventIdInput',
    deleteEvent: 'EventIdInput',
    addOrganizerMember: 'AddOrganizerMemberInput',
  };
  return special[mutation] ?? `${mutation[0]!.toUpperCase()}${mutation.slice(1)}Input`;
}

/** A mutation's raw response, for tests of its failures. */
export function mutateRaw(t: TestApp, token: string | undefined, mutation: string, input: Record<string, unknown>, selection: string) {
  return graphql(
    t.url,
    `mutation($input: ${inputType(mutation)}!) { ${mutation}(input: $input) { ${selection} userErrors { field message code } } }`,
    {
      ...(token ? { privateToken: token } : {}),
      variables: { input },
    },
  );
}

export async function createOrganizer(
  t: TestApp,
  token: string,
  overrides: Record<string, unknown> = {},
): Promise<{ id: string; slug: string }> {
  const slug = uniqueSlug('org');
  const payload = await mutate(t, token, 'createOrganizer', { slug, name: `Organizer ${slug}`, ...overrides }, 'organizer { id slug }');
  return payload.organizer;
}

export interface EventOptions {
  startsInMs?: number;
  capacity?: number | null;
  quantity?: number | null;
  visibility?: 'PUBLIC' | 'UNLISTED' | 'PRIVATE';
  publish?: boolean;
  title?: string;
  format?: 'IN_PERSON' | 'ONLINE' | 'HYBRID';
  maxPerOrder?: number;
  hiddenTicket?: boolean;
}

/** An event with one ticket type, published unless told otherwise. */
export async function createEvent(
  t: TestApp,
  token: string,
  organizerId: string,
  options: EventOptions = {},
): Promise<{ id: string; slug: string; ticketTypeId: string }> {
  const startsAt = new Date(t.clock.now().getTime() + (options.startsInMs ?? 7 * DAY));
  const format = options.format ?? 'HYBRID';
  const { event } = await mutate(
    t,
    token,
    'createEvent',
    {
      organizerId,
      title: options.title ?? `Meetup ${randomBytes(3).toString('hex')}`,
      startsAt: startsAt.toISOString(),
      endsAt: new Date(startsAt.getTime() + 2 * HOUR).toISOString(),
      timeZone: 'Europe/Paris',
      format,
      venue: format === 'ONLINE' ? null : { name: 'La Gaîté Lyrique', address: '3bis rue Papin', city: 'Paris', country: 'FR' },
      onlineUrl: format === 'IN_PERSON' ? null : 'https://meet.example.com/room-42',
      capacity: options.capacity === undefined ? 100 : options.capacity,
      visibility: options.visibility ?? 'PUBLIC',
    },
    'event { id slug }',
  );
  const { ticketType } = await mutate(
    t,
    token,
    'createTicketType',
    {
      eventId: event.id,
      name: 'General admission',
      price: { amount: 0, currency: 'EUR' },
      quantity: options.quantity ?? null,
      maxPerOrder: options.maxPerOrder ?? 10,
      hidden: options.hiddenTicket ?? false,
    },
    'ticketType { id }',
  );
  if (options.publish !== false) await mutate(t, token, 'publishEvent', { eventId: event.id }, 'event { id }');
  return { ...event, ticketTypeId: ticketType.id };
}

export function registerFor(t: TestApp, token: string, event: { id: string; ticketTypeId: string }, attendees = 1) {
  return mutateRaw(
    t,
    token,
    'registerForEvent',
    {
      eventId: event.id,
      ticketTypeId: event.ticketTypeId,
      attendees: Array.from({ length: attendees }, (_, i) => ({ name: `Attendee ${i + 1}`, email: `attendee${i + 1}@example.com` })),
    },
    'registration { id status referenceCode quantity attendees { id name email } }',
  );
}

export function registrationOf(res: { body: GraphqlBody }): any {
  const payload = res.body.data?.registerForEvent;
  if (!payload?.registration) throw new Error(`registration failed: ${JSON.stringify(res.body)}`);
  return payload.registration;
}

/**
 * Many users with a token each, inserted in bulk: password hashing (argon2) would make hundreds of
 * sign-ups slow, and these users never sign in with a password.
 */
export async function createManyUsersWithTokens(t: TestApp, count: number): Promise<{ id: string; token: string }[]> {
  const tag = randomBytes(4).toString('hex');
  const rows = (await t.get(DataSource).query(
    `INSERT INTO users (username, email, name, password_hash, email_verified_at)
     SELECT 'bulk-' || $1 || '-' || n, 'bulk-' || $1 || '-' || n || '@example.com', 'Bulk user ' || n, 'not-a-password-hash', now()
       FROM generate_series(1, $2::int) AS n
     RETURNING id`,
    [tag, count],
  )) as { id: string }[];
  const tokens = t.get(PersonalTokensService);
  const users: { id: string; token: string }[] = [];
  for (const row of rows) users.push({ id: row.id, token: (await tokens.create(row.id, { name: 'bulk', scopes: ['api'] })).token });
  return users;
}

/** Published public events with one ticket type each, inserted in bulk (listing and pagination tests). */
export async function insertEvents(t: TestApp, organizerGlobalId: string, events: { title: string; startsAt: Date }[]): Promise<void> {
  const organizerId = idOfType(organizerGlobalId, 'Organizer');
  await t.get(DataSource).query(
    `WITH e AS (
       INSERT INTO events (organizer_id, slug, title, starts_at, ends_at, time_zone, format, venue_name, venue_city, venue_country,
                           capacity, status, visibility, published_at)
       SELECT $1, 'bulk-' || md5(random()::text || x.title), x.title, x.starts_at, x.starts_at + interval '2 hours', 'Europe/Paris', 'in_person',
              'Hall', 'Paris', 'FR', 100, 'published', 'public', now()
         FROM unnest($2::text[], $3::timestamptz[]) AS x(title, starts_at)
       RETURNING id)
     INSERT INTO ticket_types (event_id, name, price_amount, price_currency, quantity) SELECT id, 'General admission', 1500, 'EUR', 100 FROM e`,
    [organizerId, events.map((e) => e.title), events.map((e) => e.startsAt)],
  );
}
