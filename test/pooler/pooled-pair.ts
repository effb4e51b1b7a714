import * as client from 'openid-client';
import { setTimeout as sleep } from 'node:timers/promises';
import { REVOCATION_BOUND_MS } from '../../src/auth/credential-change.listener.js';
import { cli, Fleet, Instance, ScratchDatabase } from '../fleet/fleet.js';
import { Browser, formFields, signIn } from '../support/browser.js';
import { TEST_PASSWORD } from '../support/fixtures.js';
import { graphql } from '../support/http.js';
import { authorizationRequest, REDIRECT_URI } from '../support/oauth.js';
import { PgBouncer, PoolMode } from './pgbouncer.js';
import {
  boundWarnings,
  directEnv,
  migrate,
  newUser,
  poolerDatabase,
  setRoleBounds,
  runConcurrently,
  startBouncers,
  startPooledFleet,
  TRANSACTION_POOL_SIZE,
} from './pooler.js';

/** Listings each instance answers during the listing test: thousands in all, a few seconds' work. */
export const LISTINGS_PER_INSTANCE = Number(process.env.POOLER_LISTINGS_PER_INSTANCE || 1500);
const CONCURRENCY_PER_INSTANCE = 8;
/** Personal tokens revoked, through each instance in turn. */
const REVOCATION_TRIALS = 4;
/** Refresh-token families reused, started on each instance in turn. */
const REFRESH_FAMILIES = 2;

interface App {
  clientId: string;
  clientSecret: string;
}

/** The moment the two date filters are on either side of; every event is a whole number of days from it. */
const T = Date.parse('2031-06-01T00:00:00Z');
const DAY = 86_400_000;
const EVENTS_PER_SIDE = 30;
const PAGE = 10;

const LISTING = `query($filter: EventFilter) { events(first: ${PAGE}, filter: $filter) { edges { node { title startsAt } } } }`;

/** One kind of listing request and the exact answer it must get. */
interface Listing {
  name: string;
  fetch(instance: Instance): Promise<{ status: number; titles?: string[]; error?: string }>;
  expected: string[];
}

const graphqlListing = (name: string, filter: Record<string, string>, expected: string[]): Listing => ({
  name,
  expected,
  async fetch(instance) {
    const res = await graphql(instance.url, LISTING, { variables: { filter } });
    if (res.status !== 200 || res.body?.errors || !res.body?.data?.events) return { status: res.status, error: res.text.slice(0, 300) };
    return { status: res.status, titles: (res.body.data.events.edges as { node: { title: string } }[]).map((e) => e.node.title) };
  },
});

const restListing = (name: string, query: string, expected: string[]): Listing => ({
  name,
  expected,
  async fetch(instance) {
    const res = await fetch(`${instance.url}/api/events?${query}&per_page=${PAGE}`);
    const text = await res.text();
    if (res.status !== 200) return { status: res.status, error: text.slice(0, 300) };
    try {
      return { status: res.status, titles: (JSON.parse(text) as { title: string }[]).map((e) => e.title) };
    } catch {
      return { status: res.status, error: text.slice(0, 300) };
    }
  },
});

/**
 * Two instances behind a PgBouncer in `mode` (transaction: DATABASE_POOLING=transaction and
 * DATABASE_DIRECT_URL; session: the defaults), on a database migrated beforehand by a migration job
 * (MIGRATIONS_RUN=false: the start-up migration lock is the cold-start test's subject).
 */
export function describePooledPair(mode: Extract<PoolMode, 'transaction' | 'session'>): void {
  describe(`two instances behind PgBouncer in ${mode} mode`, () => {
    let bouncer: PgBouncer;
    let db: ScratchDatabase;
    let fleet: Fleet;
    let a: Instance;
    let b: Instance;
    let username: string;
    let app: App;

    beforeAll(async () => {
      db = await poolerDatabase();
      [bouncer] = await startBouncers(mode);
      await migrate(db);
      if (mode === 'transaction') await setRoleBounds(db);
      // More pooled connections than the transaction pool has server connections: they must share.
      [, fleet, username] = await Promise.all([
        seedEvents(db),
        startPooledFleet(bouncer!, db, 2, { MIGRATIONS_RUN: 'false', DATABASE_POOL_SIZE: '8' }),
        newUser(db),
      ]);
      [a, b] = fleet.instances as [Instance, Instance];
      app = (await cli(
        directEnv(db),
        ...[
          'apps:create',
          '--user',
          username,
          '--name',
          'Pooler client',
          '--redirect-uri',
          REDIRECT_URI,
          '--scopes',
          'openid api offline_access',
        ],
      )) as App;
    });

    afterAll(async () => {
      const codes = fleet ? await fleet.stop() : [];
      await bouncer?.stop();
      await db?.drop();
      expect(codes).toEqual(fleet ? [0, 0] : []);
    });

    it('logs no warning about server-side statement bounds (set on the role in transaction mode, by SET in session mode)', () => {
      expect(fleet.instances.flatMap(boundWarnings)).toEqual([]);
    });

    it(`answers ${2 * LISTINGS_PER_INSTANCE} concurrent listings with opposite filters on the two instances, each with its own filter's rows only`, async () => {
      const early = Array.from({ length: PAGE }, (_, i) => `early-${pad(i)}`);
      const late = Array.from({ length: PAGE }, (_, i) => `late-${pad(i)}`);
      const at = new Date(T).toISOString();
      // Each instance first prepares its own filter's statement, then runs its mix over and over: the
      // two mixes have opposite date filters and different organizers.
      const mixes = new Map<Instance, Listing[]>([
        [
          a,
          [
            graphqlListing('graphql startsAfter', { startsAfter: at }, late),
            graphqlListing('graphql organizer late', { organizerSlug: 'pooler-late' }, late),
            restListing('rest starts_after', `starts_after=${encodeURIComponent(at)}`, late),
          ],
        ],
        [
          b,
          [
            graphqlListing('graphql startsBefore', { startsBefore: at }, early),
            graphqlListing('graphql organizer early', { organizerSlug: 'pooler-early' }, early),
            restListing('rest starts_before', `starts_before=${encodeURIComponent(at)}`, early),
          ],
        ],
      ]);
      const tally = { requests: 0, right: 0, wrong: 0, failed: 0 };
      const examples: string[] = [];
      const check = async (instance: Instance, listing: Listing) => {
        const answer = await listing.fetch(instance).catch((err: Error) => ({ status: 0, error: err.message, titles: undefined }));
        tally.requests++;
        if (answer.titles && equal(answer.titles, listing.expected)) return void tally.right++;
        if (answer.titles) tally.wrong++;
        else tally.failed++;
        if (examples.length < 5)
          examples.push(`${instance.name} ${listing.name}: ${answer.status} ${answer.titles?.join(',') ?? answer.error}`);
      };
      for (const [instance, mix] of mixes) await check(instance, mix[0]!);

      const sharing = watchPools(bouncer, db.name);
      const started = performance.now();
      await Promise.all(
        [...mixes].map(([instance, mix]) =>
          runConcurrently(LISTINGS_PER_INSTANCE - 1, CONCURRENCY_PER_INSTANCE, (n) => check(instance, mix[n % mix.length]!)),
        ),
      );
      const seconds = (performance.now() - started) / 1000;
      const pools = await sharing.stop();
      console.log(
        `pooler ${mode}: ${tally.requests} listings in ${seconds.toFixed(1)} s, ${tally.wrong} wrong answers, ${tally.failed} failed; ` +
          `PgBouncer: up to ${pools.clients} client connections on up to ${pools.servers} server connections` +
          (examples.length ? `\n${examples.join('\n')}` : ''),
      );

      expect(examples).toEqual([]);
      expect(tally).toEqual({ requests: 2 * LISTINGS_PER_INSTANCE, right: 2 * LISTINGS_PER_INSTANCE, wrong: 0, failed: 0 });
      if (mode === 'transaction') {
        // The instances' connections really shared the pool's few server connections.
        expect(pools.servers).toBeLessThanOrEqual(TRANSACTION_POOL_SIZE);
        expect(pools.clients).toBeGreaterThan(TRANSACTION_POOL_SIZE);
      }
    });

    it(`refuses a personal token on one instance once its revocation through the other has answered (bound: ${REVOCATION_BOUND_MS} ms)`, async () => {
      const trials: { via: string; answeredMs: number; acceptedAfter: number; lastAcceptedMs: number | null; first401Ms: number | null }[] =
        [];
      const failures: string[] = [];
      const browsers = new Map<Instance, Browser>();
      for (const instance of [a, b]) {
        const browser = new Browser(instance.url, fleet.site);
        expect((await signIn(browser, username, TEST_PASSWORD)).status).toBe(303);
        browsers.set(instance, browser);
      }
      for (let trial = 0; trial < REVOCATION_TRIALS; trial++) {
        const [via, other] = trial % 2 === 0 ? [a, b] : [b, a];
        const browser = browsers.get(via)!;
        const { id, token } = await createToken(browser, `pooler-${trial}`);
        for (const instance of [a, b, a, b]) expect(await viewer(instance, token)).toBe(200); // cached on both now

        const confirm = await browser.get(`/account/tokens/${id}/revoke`);
        const fields = formFields(await confirm.text());

        // The other instance is asked all along, before, during and after the revoke.
        const asked: { sent: number; received: number; status: number }[] = [];
        let asking = true;
        const started = performance.now();
        const askers = Array.from({ length: 2 }, async () => {
          while (asking) {
            const sent = performance.now();
            const status = await viewer(other, token).catch(() => 0);
            asked.push({ sent, received: performance.now(), status });
          }
        });
        const revoked = await browser.post(`/account/tokens/${id}/revoke`, fields);
        const answered = performance.now();
        const next = await viewer(other, token);
        await sleep(1_000);
        asking = false;
        await Promise.all(askers);

        expect(revoked.status).toBe(303);
        const after = asked.filter((r) => r.sent >= answered);
        const accepted = asked.filter((r) => r.status === 200);
        const refused = asked.filter((r) => r.status === 401);
        trials.push({
          via: via.name,
          answeredMs: Math.round(answered - started),
          acceptedAfter: after.filter((r) => r.status === 200).length,
          lastAcceptedMs: accepted.length ? Math.round(Math.max(...accepted.map((r) => r.received)) - started) : null,
          first401Ms: refused.length ? Math.round(Math.min(...refused.map((r) => r.received)) - started) : null,
        });
        if (next !== 401) failures.push(`trial ${trial}: the first request to ${other.name} after the revoke answered got ${next}`);
        const odd = asked.filter((r) => r.status !== 200 && r.status !== 401);
        if (odd.length) failures.push(`trial ${trial}: ${odd.length} answers neither 200 nor 401 (${odd[0]!.status})`);
      }
      console.log(
        `pooler ${mode}: revocation across instances (ms from the revoke's start; 'accepted after' counts requests sent after it answered that got 200)\n` +
          trials
            .map(
              (t, i) =>
                `  trial ${i} via ${t.via}: revoke answered at ${t.answeredMs}, first 401 at ${t.first401Ms}, last 200 at ${t.lastAcceptedMs}, accepted after: ${t.acceptedAfter}`,
            )
            .join('\n'),
      );
      expect(failures).toEqual([]);
      for (const t of trials) {
        expect(t.acceptedAfter).toBe(0);
        // Every instance acknowledged: the revoke answered well inside the bound (docs/operations.md).
        expect(t.answeredMs).toBeLessThan(REVOCATION_BOUND_MS);
      }
    });

    it('answers a reused refresh token with invalid_grant on either instance and revokes its family on both', async () => {
      const refresh = async (instance: Instance, refreshToken: string) => {
        const res = await fetch(`${instance.url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: refreshToken,
            client_id: app.clientId,
            client_secret: app.clientSecret,
          }),
        });
        return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, string> };
      };

      for (let family = 0; family < REFRESH_FAMILIES; family++) {
        const [first, second] = family % 2 === 0 ? [a, b] : [b, a];
        const config = await relyingParty(fleet, second, app);
        const request = await authorizationRequest(config, 'openid api offline_access');
        const callback = await approve(fleet, new Browser(first.url, fleet.site), username, request.url);
        const tokens = await client.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: request.codeVerifier,
          expectedState: request.state,
          expectedNonce: request.nonce,
        });
        const rotated = await refresh(first, tokens.refresh_token!);
        expect(rotated.status).toBe(200);
        const newest = await refresh(second, rotated.body.refresh_token!);
        expect(newest.status).toBe(200);
        for (const instance of [a, b, a, b]) expect(await viewer(instance, undefined, newest.body.access_token)).toBe(200);

        // The first refresh token again, used up by the first rotation: refused, and the family with it.
        const reused = await refresh(first, tokens.refresh_token!);
        expect(reused).toEqual({ status: 400, body: { error: 'invalid_grant', error_description: expect.any(String) } });
        for (const instance of [b, a]) expect(await viewer(instance, undefined, newest.body.access_token)).toBe(401);
        expect(await refresh(second, newest.body.refresh_token!)).toEqual({
          status: 400,
          body: { error: 'invalid_grant', error_description: expect.any(String) },
        });
        expect(await refresh(first, newest.body.refresh_token!)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      }
    });
  });
}

async function viewer(instance: Instance, privateToken?: string, bearer?: string): Promise<number> {
  return (await graphql(instance.url, '{ viewer { username } }', privateToken ? { privateToken } : { bearer })).status;
}

/** A relying party that redeems codes at `token`'s endpoint, for the site every instance serves. */
async function relyingParty(fleet: Fleet, token: Instance, app: App): Promise<client.Configuration> {
  const metadata = (await (await fetch(`${fleet.site}/.well-known/openid-configuration`)).json()) as client.ServerMetadata;
  const config = new client.Configuration(
    { ...metadata, token_endpoint: `${token.url}/oauth/token`, jwks_uri: `${token.url}/oauth/discovery/keys` },
    app.clientId,
    undefined,
    client.ClientSecretPost(app.clientSecret),
  );
  client.allowInsecureRequests(config);
  return config;
}

/** Signs in and approves in `browser` (unless the user's consent is remembered); the callback URL with the code. */
async function approve(fleet: Fleet, browser: Browser, username: string, authorizeUrl: URL): Promise<URL> {
  const first = await browser.get(authorizeUrl.pathname + authorizeUrl.search);
  expect(first.status).toBe(302);
  const returnTo = new URL(first.headers.get('location')!, fleet.site).searchParams.get('return_to')!;
  const signedIn = await signIn(browser, username, TEST_PASSWORD, returnTo);
  expect(signedIn.status).toBe(303);
  const consent = await browser.follow(signedIn);
  if (consent.external) return new URL(consent.external);
  expect(consent.res.status).toBe(200);
  const decided = await browser.post('/oauth/authorize', { ...formFields(await consent.res.text()), decision: 'approve' });
  expect(decided.status).toBe(302);
  return new URL(decided.headers.get('location')!);
}

/**
 * A personal token made on the dashboard, where `browser` is signed in: the token, shown this once, and
 * its id, from the one revoke link of the page (the tests revoke each before making the next).
 */
async function createToken(browser: Browser, name: string): Promise<{ id: string; token: string }> {
  const { _csrf } = formFields(await (await browser.get('/account')).text());
  const { posted, html } = await browser.submit('/account/tokens', { _csrf: _csrf!, name, scopes: 'api' });
  expect(posted.status).toBe(303);
  const token = /<code id="new-token" class="secret">([^<]+)<\/code/.exec(html)?.[1];
  const ids = [...html.matchAll(/href="\/account\/tokens\/([^/"]+)\/revoke"/g)].map((m) => m[1]!);
  if (!token || ids.length !== 1) throw new Error(`no new token, or not exactly one to revoke, on the account page:\n${html}`);
  return { id: ids[0]!, token };
}

/**
 * Two organizers: `pooler-early`'s events all start before T, `pooler-late`'s at or after it, one a day,
 * titled in start order, so that each filter has one exact first page.
 */
async function seedEvents(db: ScratchDatabase): Promise<void> {
  for (const [slug, sign] of [
    ['pooler-early', -1],
    ['pooler-late', 1],
  ] as const) {
    const [organizer] = await db.query<{ id: string }>(`INSERT INTO organizers (slug, name) VALUES ($1, $1) RETURNING id`, [slug]);
    const titles = Array.from({ length: EVENTS_PER_SIDE }, (_, i) => `${slug.slice('pooler-'.length)}-${pad(i)}`);
    // early-00 is the earliest (30 days before T), late-00 starts at T.
    const starts = titles.map((_, i) => new Date(sign < 0 ? T - (EVENTS_PER_SIDE - i) * DAY : T + i * DAY));
    await db.query(
      `INSERT INTO events (organizer_id, slug, title, starts_at, ends_at, time_zone, format, venue_name, venue_city, venue_country,
                           capacity, status, visibility, published_at)
       SELECT $1, x.title, x.title, x.starts_at, x.starts_at + interval '2 hours', 'Europe/Paris', 'in_person',
              'Hall', 'Paris', 'FR', 100, 'published', 'public', now()
         FROM unnest($2::text[], $3::timestamptz[]) AS x(title, starts_at)`,
      [organizer!.id, titles, starts],
    );
  }
}

const pad = (i: number) => String(i).padStart(2, '0');
const equal = (x: string[], y: string[]) => x.length === y.length && x.every((v, i) => v === y[i]);

/** Samples PgBouncer's SHOW POOLS while the load runs: the most client and server connections seen at once. */
function watchPools(bouncer: PgBouncer, database: string): { stop(): Promise<{ clients: number; servers: number }> } {
  const seen = { clients: 0, servers: 0 };
  let watching = true;
  const loop = (async () => {
    while (watching) {
      for (const row of await bouncer.pools(database).catch(() => [])) {
        seen.clients = Math.max(seen.clients, Number(row.cl_active) + Number(row.cl_waiting));
        seen.servers = Math.max(seen.servers, Number(row.sv_active) + Number(row.sv_idle) + Number(row.sv_used));
      }
      await sleep(100);
    }
  })();
  return {
    async stop() {
      watching = false;
      await loop;
      return seen;
    },
  };
}
