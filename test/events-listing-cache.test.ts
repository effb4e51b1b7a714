import { DataSource } from 'typeorm';
import { idOfType } from '../src/graphql/global-id.js';
import { LISTING_STALENESS_MS, PublicListingCache } from '../src/events/public-listing-cache.js';
import { serverUrl } from './support/database.js';
import { createEvent, createOrganizer, mutate, registerFor, registrationOf } from './support/events.js';
import { createUserWithToken } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';
import { JobQueue } from '../src/jobs/job-queue.js';
import { WebhookSweeper } from '../src/webhooks/webhook-sweeper.js';

const LISTING = `query($organizer: String!) {
  events(first: 10, filter: { organizerSlug: $organizer }) { nodes { title spotsLeft ticketTypes { remaining } } totalCount }
}`;
const SEARCHED = `query($organizer: String!, $search: String, $first: Int) {
  events(first: $first, filter: { organizerSlug: $organizer, search: $search }) { nodes { title } totalCount }
}`;
const DETAILED = `query($organizer: String!) {
  events(first: 10, filter: { organizerSlug: $organizer }) {
    nodes { title spotsLeft organizer { name } ticketTypes { quantity remaining price { amount } } }
  }
}`;

/**
 * The public listing is kept for anonymous callers (PublicListingCache): a change made on this instance
 * shows at once; one made on another instance as soon as its notification arrives (agora_listings), and
 * within LISTING_STALENESS_MS however it goes. On the embedded database
 * there is one instance; a change made with SQL, past the instance's readers, stands for another's.
 */
describe('Public listing kept for anonymous callers', () => {
  let a: TestApp;
  /** A second instance on the same PostgreSQL database; the first again on the embedded one. */
  let b: TestApp;
  let token: string;
  let organizer: { id: string; slug: string };
  let event: { id: string; slug: string; ticketTypeId: string };

  beforeAll(async () => {
    a = await startTestApp();
    b = serverUrl() ? await startTestApp({}, { databaseEnv: a.databaseEnv }) : a;
    token = (await createUserWithToken(a)).token;
    organizer = await createOrganizer(a, token);
    event = await createEvent(a, token, organizer.id, { capacity: 10, quantity: 10, title: 'Kept talk' });
    // The webhook sweeper reads through the same data source every second: its statements are not this test's.
    for (const t of new Set([a, b])) await t.get(WebhookSweeper).beforeApplicationShutdown();
  });
  afterAll(async () => {
    if (b !== a) await b.close();
    await a.close();
  });

  const anonymous = async (t: TestApp, query: string, variables: Record<string, unknown>) => {
    const res = await graphql(t.url, query, { variables });
    expect(res.body.errors).toBeUndefined();
    return res.body.data!.events;
  };

  /** The statements `read` runs on `t`, once the jobs of earlier changes (their mail) are done. */
  const statementsOf = async (t: TestApp, read: () => Promise<unknown>) => {
    for (let i = 0; i < 200; i++) {
      const states = await t.get(JobQueue).states();
      if (states.every((q) => q.waiting === 0 && q.active === 0)) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const logger = t.get(DataSource).logger;
    const original = logger.logQuery.bind(logger);
    const seen: string[] = [];
    logger.logQuery = (sql, ...rest) => {
      seen.push(sql);
      return original(sql, ...rest);
    };
    try {
      await read();
    } finally {
      logger.logQuery = original;
    }
    return seen;
  };

  const listing = async (t: TestApp, credentials: { privateToken?: string } = {}) => {
    const res = await graphql(t.url, LISTING, { variables: { organizer: organizer.slug }, ...credentials });
    expect(res.body.errors).toBeUndefined();
    return res.body.data!.events;
  };

  it('shows a registration and an edit made on the same instance at once', async () => {
    const before = await listing(a);
    expect(before.nodes).toEqual([{ title: 'Kept talk', spotsLeft: 10, ticketTypes: [{ remaining: 10 }] }]);
    registrationOf(await registerFor(a, (await createUserWithToken(a)).token, event, 2));
    expect((await listing(a)).nodes).toEqual([{ title: 'Kept talk', spotsLeft: 8, ticketTypes: [{ remaining: 8 }] }]);
    await mutate(a, token, 'updateEvent', { eventId: event.id, title: 'Kept talk, renamed' }, 'event { id }');
    expect((await listing(a)).nodes[0].title).toBe('Kept talk, renamed');
    const second = await createEvent(a, token, organizer.id, { title: 'Second talk', startsInMs: 8 * 24 * 3600_000 });
    const after = await listing(a);
    expect(after.nodes.map((e: { title: string }) => e.title)).toEqual(['Kept talk, renamed', 'Second talk']);
    expect(after.totalCount).toBe(2);
    await mutate(a, token, 'cancelEvent', { eventId: second.id }, 'event { id }');
    expect((await listing(a)).totalCount).toBe(1);
  });

  it('keeps its pages through a registration put on the waitlist and a check-in, which change nothing it shows', async () => {
    const full = await createEvent(a, token, organizer.id, {
      capacity: 1,
      quantity: 1,
      title: 'Full talk',
      startsInMs: 10 * 24 * 3600_000,
    });
    const seated = registrationOf(await registerFor(a, (await createUserWithToken(a)).token, full, 1));
    const cache = a.get(PublicListingCache);
    const titles = async () => (await listing(a)).nodes.map((e: { title: string; spotsLeft: number }) => `${e.title} ${e.spotsLeft}`);
    expect(await titles()).toContain('Full talk 0');
    expect(cache.size.listings).toBeGreaterThan(0);

    const waitlisted = registrationOf(await registerFor(a, (await createUserWithToken(a)).token, full, 1));
    expect(waitlisted.status).toBe('WAITLISTED');
    expect(cache.size.listings).toBeGreaterThan(0);
    const checkedIn = await mutate(a, token, 'checkInAttendee', { attendeeId: seated.attendees[0].id }, 'attendee { checkedInAt }');
    expect(checkedIn.attendee.checkedInAt).toEqual(expect.any(String));
    expect(cache.size.listings).toBeGreaterThan(0);

    // An edit does: the pages go (a seat more; the ticket type, sold out, promotes no one).
    await mutate(a, token, 'updateEvent', { eventId: full.id, capacity: 2 }, 'event { id }');
    expect(cache.size.listings).toBe(0);
    expect(await titles()).toContain('Full talk 1');
  });

  it('shows a change made elsewhere within the staleness bound, and to signed-in callers at once', async () => {
    const seen = (await listing(b)).nodes[0].spotsLeft as number;
    // Another instance's registration (on the embedded database: seats taken without this instance's reader).
    if (b !== a) {
      registrationOf(await registerFor(a, (await createUserWithToken(a)).token, event, 1));
      expect((await listing(a)).nodes[0].spotsLeft).toBe(seen - 1);
    } else {
      await a.get(DataSource).query(`UPDATE events SET confirmed_seats = confirmed_seats + 1 WHERE id = $1`, [idOfType(event.id, 'Event')]);
    }
    // Signed in: read, not kept.
    expect((await listing(b, { privateToken: token })).nodes[0].spotsLeft).toBe(seen - 1);
    // However recently it was read, a page is not kept past the bound.
    b.clock.advance(LISTING_STALENESS_MS);
    expect((await listing(b)).nodes[0].spotsLeft).toBe(seen - 1);
  });

  it('reads a repeated anonymous page once, and again after the bound', async () => {
    const statements = () => statementsOf(b, () => listing(b));
    b.clock.advance(LISTING_STALENESS_MS);
    // The page, its organizers, its ticket types, and the count it asks for.
    expect(await statements()).toHaveLength(4);
    expect(await statements()).toHaveLength(0);
    b.clock.advance(LISTING_STALENESS_MS);
    expect(await statements()).toHaveLength(4);
  });

  it('keeps one page for the spellings of the same arguments: slug case, search spaces, a blank search', async () => {
    const read = (organizerSlug: string, search: string | null) =>
      statementsOf(a, () => anonymous(a, SEARCHED, { organizer: organizerSlug, search, first: 3 }));
    a.clock.advance(LISTING_STALENESS_MS);
    expect(await read(organizer.slug, 'kept')).toHaveLength(4);
    expect(await read(organizer.slug.toUpperCase(), '  kept ')).toHaveLength(0);
    expect(await read(organizer.slug, null)).toHaveLength(4);
    expect(await read(organizer.slug.toUpperCase(), '   ')).toHaveLength(0);
  });

  it('drops expired pages when asked for another, so they do not stay in memory', async () => {
    const cache = a.get(PublicListingCache);
    a.clock.advance(LISTING_STALENESS_MS);
    await anonymous(a, SEARCHED, { organizer: organizer.slug, search: null, first: 4 });
    expect(cache.size.listings).toBe(1);
    expect(cache.size.weight).toBeGreaterThan(0);
    a.clock.advance(LISTING_STALENESS_MS);
    await anonymous(a, SEARCHED, { organizer: organizer.slug, search: null, first: 5 });
    expect(cache.size.listings).toBe(1);
  });

  describe('shows at once, on the instance that made it, a change to', () => {
    let owner: string;
    let org: { id: string; slug: string };
    let ev: { id: string; slug: string; ticketTypeId: string };
    const page = () => anonymous(a, DETAILED, { organizer: org.slug });
    beforeAll(async () => {
      owner = (await createUserWithToken(a)).token;
      org = await createOrganizer(a, owner);
      ev = await createEvent(a, owner, org.id, { capacity: 10, quantity: 8, title: 'Fresh talk' });
    });

    it('a ticket type’s price', async () => {
      expect((await page()).nodes[0].ticketTypes[0].price.amount).toBe(0);
      await mutate(
        a,
        owner,
        'updateTicketType',
        { ticketTypeId: ev.ticketTypeId, price: { amount: 1500, currency: 'EUR' } },
        'ticketType { id }',
      );
      expect((await page()).nodes[0].ticketTypes[0].price.amount).toBe(1500);
    });

    it('a ticket type’s quantity', async () => {
      expect((await page()).nodes[0].ticketTypes[0]).toMatchObject({ quantity: 8, remaining: 8 });
      await mutate(a, owner, 'updateTicketType', { ticketTypeId: ev.ticketTypeId, quantity: 6 }, 'ticketType { id }');
      expect((await page()).nodes[0].ticketTypes[0]).toMatchObject({ quantity: 6, remaining: 6 });
    });

    it('a ticket type’s hidden flag', async () => {
      expect((await page()).nodes[0].ticketTypes).toHaveLength(1);
      await mutate(a, owner, 'updateTicketType', { ticketTypeId: ev.ticketTypeId, hidden: true }, 'ticketType { id }');
      expect((await page()).nodes[0].ticketTypes).toHaveLength(0);
      await mutate(a, owner, 'updateTicketType', { ticketTypeId: ev.ticketTypeId, hidden: false }, 'ticketType { id }');
    });

    it('the organizer’s name', async () => {
      expect((await page()).nodes[0].organizer.name).not.toBe('Renamed organizer');
      await mutate(a, owner, 'updateOrganizer', { organizerId: org.id, name: 'Renamed organizer' }, 'organizer { id }');
      expect((await page()).nodes[0].organizer.name).toBe('Renamed organizer');
    });

    it('a registration cancelled (its seats freed)', async () => {
      const guest = (await createUserWithToken(a)).token;
      const registration = registrationOf(await registerFor(a, guest, ev, 2));
      expect((await page()).nodes[0].spotsLeft).toBe(8);
      await mutate(a, guest, 'cancelRegistration', { registrationId: registration.id }, 'registration { status }');
      expect((await page()).nodes[0].spotsLeft).toBe(10);
    });

    it('an event published', async () => {
      const draft = await createEvent(a, owner, org.id, { title: 'Draft talk', publish: false, startsInMs: 9 * 24 * 3600_000 });
      const titles = async () => (await page()).nodes.map((e: { title: string }) => e.title);
      expect(await titles()).toEqual(['Fresh talk']);
      await mutate(a, owner, 'publishEvent', { eventId: draft.id }, 'event { id }');
      expect(await titles()).toEqual(['Fresh talk', 'Draft talk']);
    });
  });

  (serverUrl() ? it : it.skip)('empties another instance’s pages when a change commits, long before the bound', async () => {
    const cache = b.get(PublicListingCache);
    const page = () => anonymous(b, SEARCHED, { organizer: organizer.slug, search: null, first: 6 });
    const title = (await page()).nodes[0].title as string;
    expect(cache.size.listings).toBeGreaterThan(0);
    await mutate(a, token, 'updateEvent', { eventId: event.id, title: `${title}, again` }, 'event { id }');
    const committed = performance.now();
    // Nothing asks b for a page meanwhile (which would sweep it): only a notification empties it.
    while (cache.size.listings > 0 && performance.now() - committed < LISTING_STALENESS_MS) await new Promise((r) => setTimeout(r, 5));
    expect(cache.size.listings).toBe(0);
    expect(performance.now() - committed).toBeLessThan(LISTING_STALENESS_MS / 2);
    expect((await page()).nodes[0].title).toBe(`${title}, again`);
  });
});
