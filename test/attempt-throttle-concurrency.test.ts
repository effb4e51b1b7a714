import { DataSource } from 'typeorm';
import { SIGN_IN_LIMITS, SIGN_UP_LIMIT, AttemptThrottle } from '../src/sessions/attempt-throttle.js';
import { Browser, formFields } from './support/browser.js';
import { serverUrl } from './support/database.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { startTestApp, TestApp } from './support/test-app.js';

const QUEUE_THE_BURST = { DATABASE_POOL_WAIT_TIMEOUT_MS: '20000' };

// On PostgreSQL the requests are spread over two instances sharing one database; the embedded database
// opens in one process only, so there every request goes to the one instance.
let first: TestApp;
let second: TestApp;
let instances: TestApp[];
beforeAll(async () => {
  // A burst of 100 holds each instance's pool of 10 for as long as the throttled checks take one after
  // another (a password hash each, on a shared 2-core machine): these tests are about the throttle's
  // counts, not about shedding a saturated pool (test/database-timeouts.test.ts), so the wait is long.
  first = await startTestApp(QUEUE_THE_BURST);
  second = serverUrl() ? await startTestApp(QUEUE_THE_BURST, { databaseEnv: first.databaseEnv }) : first;
  instances = [...new Set([first, second])];
});
afterAll(async () => {
  if (second !== first) await second.close();
  await first.close();
});

/** The CSRF cookie and form fields of one page load, reusable for any number of posts. */
async function formOf(path: string): Promise<{ cookie: string; fields: Record<string, string> }> {
  const browser = new Browser(first.url);
  const fields = formFields(await (await browser.get(path)).text());
  return { cookie: `agora_csrf=${browser.cookie('agora_csrf')}`, fields };
}

/** Sends `count` form posts at once, alternating between the instances; resolves to the statuses. */
async function burst(path: string, count: number, form: (n: number) => Record<string, string>, cookie: string): Promise<number[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, n) => {
      const res = await fetch(`${[first, second][n % 2]!.url}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams(form(n)).toString(),
      });
      await res.arrayBuffer();
      return res.status;
    }),
  );
}

const tally = (statuses: number[]): Record<number, number> =>
  statuses.reduce<Record<number, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {});

/** Moves every instance's clock past the sign-up window, so earlier tests' counts no longer apply. */
function nextHour(): void {
  for (const t of instances) t.clock.advance(SIGN_UP_LIMIT.windowMs + 1000);
}

describe('sign-in throttling under concurrency', () => {
  it(`checks at most ${SIGN_IN_LIMITS.account} of 100 simultaneous wrong passwords for one account and answers 429 to the rest`, async () => {
    const user = await createUser(first);
    const { cookie, fields } = await formOf('/sign-in');
    const statuses = await burst('/sign-in', 100, () => ({ ...fields, login: user.username, password: 'wrong-password-guess' }), cookie);

    const counts = tally(statuses);
    expect(counts[401] ?? 0).toBeLessThanOrEqual(SIGN_IN_LIMITS.account);
    expect((counts[401] ?? 0) + (counts[429] ?? 0)).toBe(100);
    expect((await burst('/sign-in', 1, () => ({ ...fields, login: user.username, password: TEST_PASSWORD }), cookie))[0]).toBe(429);
  }, 60_000);
});

describe('sign-up throttling under concurrency', () => {
  const users = () => first.get(DataSource);

  it(`never creates more than ${SIGN_UP_LIMIT.perAddress} accounts an hour from one address, however many sign-ups arrive at once`, async () => {
    nextHour();
    const { cookie, fields } = await formOf('/sign-up');
    const statuses = await burst(
      '/sign-up',
      30,
      (n) => ({
        ...fields,
        name: `Burst ${n}`,
        username: `burst-${n}`,
        email: `burst-${n}@example.com`,
        password: 'a-long-enough-passphrase',
      }),
      cookie,
    );

    const counts = tally(statuses);
    expect(counts[303] ?? 0).toBeLessThanOrEqual(SIGN_UP_LIMIT.perAddress);
    expect((counts[303] ?? 0) + (counts[429] ?? 0)).toBe(30);
    const [{ created }] = (await users().query(`SELECT count(*)::int AS created FROM users WHERE username LIKE 'burst-%'`)) as [
      { created: number },
    ];
    expect(created).toBe(counts[303] ?? 0);
  }, 60_000);

  it(`answers "taken" at most ${SIGN_UP_LIMIT.failedPerAddress} times an hour to one address, however many sign-ups arrive at once`, async () => {
    nextHour();
    await createUser(first, { username: 'burst-taken', email: 'burst-taken@example.com' });
    const { cookie, fields } = await formOf('/sign-up');
    const statuses = await burst(
      '/sign-up',
      60,
      (n) => ({
        ...fields,
        name: `Probe ${n}`,
        username: 'burst-taken',
        email: `probe-${n}@example.com`,
        password: 'a-long-enough-passphrase',
      }),
      cookie,
    );

    const counts = tally(statuses);
    expect(counts[422] ?? 0).toBeLessThanOrEqual(SIGN_UP_LIMIT.failedPerAddress);
    expect((counts[422] ?? 0) + (counts[429] ?? 0)).toBe(60);
  }, 60_000);

  it(`answers the ${SIGN_UP_LIMIT.failedPerAddress + 1}st "taken" sign-up of the hour, and any other, with 429 and Retry-After, keeping the form`, async () => {
    nextHour();
    await createUser(first, { username: 'probed-name', email: 'probed@example.com' });
    const { cookie, fields } = await formOf('/sign-up');
    const probe = (n: number) => ({
      ...fields,
      name: `Probe ${n}`,
      username: 'probed-name',
      email: `probe-${n}@example.com`,
      password: 'a-long-enough-passphrase',
    });
    for (let n = 1; n <= SIGN_UP_LIMIT.failedPerAddress; n++) expect(await burst('/sign-up', 1, () => probe(n), cookie)).toEqual([422]);
    expect(await burst('/sign-up', 1, () => probe(SIGN_UP_LIMIT.failedPerAddress + 1), cookie)).toEqual([429]);

    const browser = new Browser(first.url);
    const refused = await browser.post('/sign-up', {
      ...formFields(await (await browser.get('/sign-up')).text()),
      name: 'Fresh Name',
      username: 'fresh-name',
      email: 'fresh-name@example.com',
      password: 'a-long-enough-passphrase',
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000);
    const page = await refused.text();
    expect(page).toContain('Too many failed sign-ups from your network. Try again in 60 minutes.');
    expect(page).toContain('value="fresh-name"');
    await expect(users().query(`SELECT 1 FROM users WHERE username = 'fresh-name'`)).resolves.toEqual([]);

    nextHour();
    expect(await burst('/sign-up', 1, () => ({ ...probe(0), username: 'fresh-name' }), cookie)).toEqual([303]);
  }, 60_000);
});

describe('throttle housekeeping', () => {
  it('purges the rows of every kind once their window has passed, and only then', async () => {
    const kinds = async () =>
      (
        (await first.get(DataSource).query(`SELECT DISTINCT split_part(subject, ':', 1) AS kind FROM counted_attempts ORDER BY 1`)) as {
          kind: string;
        }[]
      ).map((row) => row.kind);
    nextHour();
    await first.get(AttemptThrottle).purgeExpired();
    expect(await kinds()).toEqual([]);

    await createUser(first, { username: 'purge-taken', email: 'purge-taken@example.com' });
    const signIn = await formOf('/sign-in');
    expect(
      await burst('/sign-in', 1, () => ({ ...signIn.fields, login: 'purge-taken', password: 'wrong-password-guess' }), signIn.cookie),
    ).toEqual([401]);
    const signUp = await formOf('/sign-up');
    const account = (username: string) => ({
      ...signUp.fields,
      name: 'Purge',
      username,
      email: `${username}@example.com`,
      password: 'a-long-enough-passphrase',
    });
    expect(await burst('/sign-up', 1, () => account('purge-taken'), signUp.cookie)).toEqual([422]);
    expect(await burst('/sign-up', 1, () => account('purge-created'), signUp.cookie)).toEqual([303]);
    expect(await kinds()).toEqual(['sign-in-account', 'sign-in-ip', 'signup', 'signup-failed', 'signup-mail']);

    first.clock.advance(20 * 60_000);
    await first.get(AttemptThrottle).purgeExpired();
    expect(await kinds()).toEqual(['signup', 'signup-failed', 'signup-mail']);
    nextHour();
    await first.get(AttemptThrottle).purgeExpired();
    expect(await kinds()).toEqual([]);
  });
});
