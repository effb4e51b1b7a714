import { DataSource } from 'typeorm';
import { CursorCodec } from '../src/database/cursor-codec.js';
import { encodeCursor } from '../src/database/keyset.js';
import { byStart } from '../src/events/events.service.js';
import { LISTING_STALENESS_MS } from '../src/events/public-listing-cache.js';
import { createUserWithToken } from './support/fixtures.js';
import { createOrganizer, insertEvents } from './support/events.js';
import { graphql } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';
import { WebhookSweeper } from '../src/webhooks/webhook-sweeper.js';
import { JobQueue } from '../src/jobs/job-queue.js';
import { CredentialChangeListener } from '../src/auth/credential-change.listener.js';

const PAGE = `query($first: Int, $after: String, $last: Int, $before: String, $filter: EventFilter, $orderBy: EventOrder) {
  events(first: $first, after: $after, last: $last, before: $before, filter: $filter, orderBy: $orderBy) {
    edges { cursor node { id title startsAt } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

describe('Event listing: keyset pagination, filters, and a constant number of SQL statements', () => {
  let t: TestApp;
  let token: string;
  let organizer: { id: string; slug: string };
  const base = Date.parse('2031-03-01T00:00:00Z');
  const HOUR = 3600_000;

  beforeAll(async () => {
    t = await startTestApp();
    // The webhook sweeper reads through the same data source every second: its statements are not this test's.
    await t.get(WebhookSweeper).beforeApplicationShutdown();
    token = (await createUserWithToken(t)).token;
    organizer = await createOrganizer(t, token);
    // Hourly events, plus two at the same instant to exercise the id tie-break.
    await insertEvents(
      t,
      organizer.id,
      Array.from({ length: 60 }, (_, i) => ({ title: `Talk ${String(i).padStart(2, '0')}`, startsAt: new Date(base + i * HOUR) })),
    );
    await insertEvents(t, organizer.id, [
      { title: 'Twin A', startsAt: new Date(base + 10 * HOUR) },
      { title: 'Twin B', startsAt: new Date(base + 10 * HOUR) },
    ]);
  });
  afterAll(() => t.close());

  const page = async (variables: Record<string, unknown>) => {
    const res = await graphql(t.url, PAGE, { variables: { filter: { organizerSlug: organizer.slug }, ...variables } });
    expect(res.body.errors).toBeUndefined();
    return res.body.data!.events;
  };

  it('walks the whole list forward and backward, each item once, in start order', async () => {
    const forward: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const events: any = await page({ first: 25, after });
      forward.push(...events.edges.map((e: any) => e.node.title));
      after = events.pageInfo.hasNextPage ? events.pageInfo.endCursor : null;
      pages++;
    } while (after);
    expect(pages).toBe(3);
    expect(forward).toHaveLength(62);
    expect(new Set(forward).size).toBe(62);
    expect(forward.slice(0, 2)).toEqual(['Talk 00', 'Talk 01']);

    const backward: string[] = [];
    let before: string | null = null;
    do {
      const events: any = await page({ last: 25, before });
      backward.unshift(...events.edges.map((e: any) => e.node.title));
      before = events.pageInfo.hasPreviousPage ? events.pageInfo.startCursor : null;
    } while (before);
    expect(backward).toEqual(forward);
  });

  it('keeps pages stable when events are inserted before the cursor', async () => {
    const first = await page({ first: 10 });
    const cursor = first.pageInfo.endCursor;
    const expected = (await page({ first: 10, after: cursor })).edges.map((e: any) => e.node.id);
    // Earlier events appear: an OFFSET page would shift; a keyset page does not.
    await insertEvents(t, organizer.id, [
      { title: 'Early 1', startsAt: new Date(base - 2 * HOUR) },
      { title: 'Early 2', startsAt: new Date(base - HOUR) },
    ]);
    const again = (await page({ first: 10, after: cursor })).edges.map((e: any) => e.node.id);
    expect(again).toEqual(expected);
  });

  it('filters by time range and title, and orders by start time descending', async () => {
    const range = await page({
      first: 100,
      filter: {
        organizerSlug: organizer.slug,
        startsAfter: new Date(base + 5 * HOUR).toISOString(),
        startsBefore: new Date(base + 8 * HOUR).toISOString(),
      },
    });
    expect(range.edges.map((e: any) => e.node.title)).toEqual(['Talk 05', 'Talk 06', 'Talk 07']);
    const search = await page({ first: 100, filter: { organizerSlug: organizer.slug, search: 'twin' } });
    expect(search.edges.map((e: any) => e.node.title).sort()).toEqual(['Twin A', 'Twin B']);
    // LIKE wildcards in the search text are matched literally.
    expect((await page({ first: 100, filter: { organizerSlug: organizer.slug, search: '%' } })).edges).toEqual([]);
    const desc = await page({ first: 2, orderBy: { field: 'STARTS_AT', direction: 'DESC' } });
    expect(desc.edges.map((e: any) => e.node.title)).toEqual(['Talk 59', 'Talk 58']);
  });

  it('rejects page sizes over 100, first with last, and foreign cursors as BAD_USER_INPUT', async () => {
    for (const [variables, message] of [
      [{ first: 101 }, 'first must be between 0 and 100.'],
      [{ first: 5, last: 5 }, 'Pass either first or last, not both.'],
      [{ after: 'bm90LWEtY3Vyc29y' }, 'after is not a cursor of this list.'],
      [{ before: 'WyJ4IiwieSJd' }, 'before is not a cursor of this list.'],
    ] as const) {
      const res = await graphql(t.url, PAGE, { variables });
      expect(res.body.errors?.[0]).toMatchObject({ message, extensions: { code: 'BAD_USER_INPUT' } });
    }
  });

  describe('cursors', () => {
    const PAGE_AFTER = 'query($after: String) { events(first: 3, after: $after) { nodes { title } } }';
    const pageAfter = (after: string) => graphql(t.url, PAGE_AFTER, { variables: { after } });
    const expectInvalid = (res: Awaited<ReturnType<typeof pageAfter>>) => {
      expect(res.status).toBe(200);
      expect(res.body.data).toBeNull();
      expect(res.body.errors).toEqual([
        {
          message: 'after is not a cursor of this list.',
          locations: [{ line: 1, column: 25 }],
          path: ['events'],
          extensions: { code: 'BAD_USER_INPUT', reason: 'INVALID_CURSOR', field: 'after' },
        },
      ]);
    };
    /** The sort key of a listed event, as a cursor holds it. */
    const keyOf = async (title: string): Promise<string[]> => {
      const [row] = (await t
        .get(DataSource)
        .query('SELECT starts_at::text AS s, id::text AS id FROM events WHERE title = $1', [title])) as {
        s: string;
        id: string;
      }[];
      return [row!.s, row!.id];
    };

    it('are versioned base64url, and the cursor of a page works', async () => {
      const first = await page({ first: 3 });
      const cursor: string = first.pageInfo.endCursor;
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Buffer.from(cursor, 'base64url')[0]).toBe(1);
      const titles = (edges: any[]) => edges.map((e) => e.node.title);
      const six = titles((await page({ first: 6 })).edges);
      expect(titles((await page({ first: 3, after: cursor })).edges)).toEqual(six.slice(3));
    });

    it('refuse a cursor with one character changed', async () => {
      const cursor: string = (await page({ first: 3 })).pageInfo.endCursor;
      const i = Math.floor(cursor.length / 2);
      expectInvalid(await pageAfter(cursor.slice(0, i) + (cursor[i] === 'A' ? 'B' : 'A') + cursor.slice(i + 1)));
    });

    it('refuse a cursor forged with valid contents but without the key', async () => {
      const values = await keyOf('Talk 02');
      // The same values sealed with the service's key work: only the key is missing below.
      const genuine = encodeCursor(values, byStart('Query.events', 'ASC'), t.get(CursorCodec));
      expect((await pageAfter(genuine)).body.data?.events.nodes[0].title).toBe('Talk 03');
      const otherKey = CursorCodec.fromSecret('not-the-service-secret-key-0123456789abcdef');
      expectInvalid(await pageAfter(encodeCursor(values, byStart('Query.events', 'ASC'), otherKey)));
    });

    it('refuse an old unversioned cursor (base64url JSON of the sort key), which used to work', async () => {
      expectInvalid(await pageAfter(Buffer.from(JSON.stringify(await keyOf('Talk 02')), 'utf8').toString('base64url')));
    });

    it("refuse another list's cursor, and this list's from the other direction", async () => {
      const organizerEvents = await graphql(
        t.url,
        'query($slug: String!) { organizer(slug: $slug) { events(first: 3) { pageInfo { endCursor } } } }',
        {
          variables: { slug: organizer.slug },
        },
      );
      expectInvalid(await pageAfter(organizerEvents.body.data?.organizer.events.pageInfo.endCursor));
      const descending = await page({ first: 3, orderBy: { field: 'STARTS_AT', direction: 'DESC' } });
      expectInvalid(await pageAfter(descending.pageInfo.endCursor));
    });
  });

  it('costs the same few SQL statements for a page of 10 or 50 events with organizer, venue and ticket types', async () => {
    const query = `query($first: Int!) { events(first: $first, filter: { organizerSlug: "${organizer.slug}" }) {
      nodes { id title venue { name city } organizer { name slug } ticketTypes { name price { amount currency } remaining } } } }`;
    const statements = async (first: number, credentials: { privateToken?: string } = {}) => {
      // Jobs of the set-up (the token's security notice) read through the same data source: let them finish.
      for (let i = 0; i < 200; i++) {
        const states = await t.get(JobQueue).states();
        if (states.every((q) => q.waiting === 0 && q.active === 0)) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // And every listing notification of earlier writes has been heard (on PostgreSQL they arrive through
      // the listener's connection, later under load): none can empty the cache between the reads below.
      await t.get(CredentialChangeListener).barrier();
      const logger = t.get(DataSource).logger;
      const original = logger.logQuery.bind(logger);
      const seen: string[] = [];
      logger.logQuery = (sql, ...rest) => {
        seen.push(sql);
        return original(sql, ...rest);
      };
      try {
        const res = await graphql(t.url, query, { variables: { first }, ...credentials });
        expect(res.body.errors).toBeUndefined();
        expect(res.body.data?.events.nodes).toHaveLength(first);
        expect(res.body.data?.events.nodes[0].ticketTypes).toEqual([
          { name: 'General admission', price: { amount: 1500, currency: 'EUR' }, remaining: 100 },
        ]);
      } finally {
        logger.logQuery = original;
      }
      return seen;
    };
    // The page (its organizer filter is a subquery), its organizers, its ticket types.
    // Anonymous pages are kept for a second (PublicListingCache; test/events-listing-cache.test.ts):
    // past it, each is read again; within it, not at all.
    t.clock.advance(LISTING_STALENESS_MS);
    const anonymous = await statements(50);
    expect(anonymous).toHaveLength(3);
    expect(await statements(10)).toHaveLength(3);
    expect(await statements(50)).toHaveLength(0);
    // Signed in: plus the caller's roles in those organizers, once (and the token lookup, which the
    // PostgreSQL credential cache may answer instead).
    const signedIn = (await statements(50, { privateToken: token })).filter((sql) => !sql.includes('personal_access_tokens'));
    expect(signedIn).toHaveLength(4);
  });

  it('rejects an abusive nested listing before running it, with a lower limit for anonymous callers', async () => {
    const nested = `{ events(first: 100) { nodes { organizer { events(first: 100) { nodes { title ticketTypes { name } } } } } } }`;
    const anonymous = await graphql(t.url, nested);
    expect(anonymous.status).toBe(400);
    expect(anonymous.body.data).toBeUndefined();
    expect(anonymous.body.errors?.[0]).toMatchObject({ extensions: { code: 'QUERY_TOO_COMPLEX', maxCost: 5000 } });
    expect(anonymous.body.errors?.[0].message).toMatch(/^Query would cost \d+ points; the limit is 5000\./);

    const deep = `{ events { nodes { organizer { events { nodes { organizer { events { nodes { id } } } } } } } } }`;
    const tooDeep = await graphql(t.url, deep);
    expect(tooDeep.body.errors?.[0]).toMatchObject({
      message: 'Query is nested 9 levels deep; the limit is 8.',
      extensions: { code: 'QUERY_TOO_DEEP' },
    });

    // A page of 50 with its details fits the anonymous budget.
    const fits = await graphql(
      t.url,
      `
        {
          events(first: 50) {
            nodes {
              title
              organizer {
                name
              }
              ticketTypes {
                name
                price {
                  amount
                }
              }
            }
          }
        }
      `,
    );
    expect(fits.status).toBe(200);
  });
});
