import { DataSource } from 'typeorm';
import { LINK_MAIL_LIMITS } from '../src/sessions/attempt-throttle.js';
import { waitUntil } from './support/mail-flows.js';
import { queuesSettled } from './support/job-queue.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { serverUrl } from './support/database.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';
import { startTestApp, TestApp } from './support/test-app.js';

// The limits on mailed links hold under bursts, across instances: their counts live in the shared
// counted_attempts table, each check and its record one transaction under advisory locks. On PostgreSQL
// the requests alternate between two instances on one database; the embedded database opens in one
// process only, so there they all go to one instance.

const QUEUE_THE_BURST = { DATABASE_POOL_WAIT_TIMEOUT_MS: '20000', JOBS_RETRY_DELAY_SECONDS: '1' };

let smtp: TestSmtpServer;
let first: TestApp;
let second: TestApp;
let instances: TestApp[];
beforeAll(async () => {
  smtp = await startSmtpServer();
  first = await startTestApp({ ...QUEUE_THE_BURST, SMTP_URL: smtp.url });
  second = serverUrl() ? await startTestApp({ ...QUEUE_THE_BURST, SMTP_URL: smtp.url }, { databaseEnv: first.databaseEnv }) : first;
  instances = [...new Set([first, second])];
});
afterAll(async () => {
  if (second !== first) await second.close();
  await first.close();
  await smtp.close();
});

const nextHour = () => {
  for (const t of instances) t.clock.advance(LINK_MAIL_LIMITS.windowMs + 60_000);
};

/** Sends `count` form posts at once, alternating between the instances, with these cookies; the statuses. */
async function burst(path: string, count: number, form: (n: number) => Record<string, string>, cookie: string): Promise<number[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, n) => {
      // No Origin header: each instance knows itself by its own BASE_URL (as attempt-throttle-concurrency does).
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

const linksOf = async (userId: string, purpose: string): Promise<number> => {
  const [{ links }] = (await first
    .get(DataSource)
    .query(`SELECT count(*)::int AS links FROM account_links WHERE user_id = $1 AND purpose = $2`, [userId, purpose])) as [
    { links: number },
  ];
  return links;
};

const cookieOf = (browser: Browser, ...names: string[]) =>
  names
    .filter((name) => browser.cookie(name))
    .map((name) => `${name}=${browser.cookie(name)}`)
    .join('; ');

describe('password reset under 100 simultaneous requests', () => {
  it(`accepts at most ${LINK_MAIL_LIMITS['reset-email']} for one address (429 for the rest) and mails the account at most ${LINK_MAIL_LIMITS['reset-user']} links`, async () => {
    nextHour();
    const user = await createUser(first);
    const browser = new Browser(first.url);
    const fields = formFields(await (await browser.get('/forgot-password')).text());
    const statuses = await burst('/forgot-password', 100, () => ({ ...fields, email: user.email }), cookieOf(browser, 'agora_csrf'));

    const counts = tally(statuses);
    expect(counts[303] ?? 0).toBeLessThanOrEqual(LINK_MAIL_LIMITS['reset-email']);
    expect(counts[303] ?? 0).toBeGreaterThanOrEqual(1);
    expect((counts[303] ?? 0) + (counts[429] ?? 0)).toBe(100);
    await waitUntil(
      async () => (await linksOf(user.id, 'reset-password')) >= Math.min(counts[303]!, LINK_MAIL_LIMITS['reset-user']),
      20_000,
      () => 'links',
    );
    await queuesSettled(first.get(DataSource), ['account-mail']);
    expect(await linksOf(user.id, 'reset-password')).toBeLessThanOrEqual(LINK_MAIL_LIMITS['reset-user']);
  }, 60_000);

  it(`accepts at most ${LINK_MAIL_LIMITS['reset-ip']} an hour from one network, whatever the addresses`, async () => {
    nextHour();
    const browser = new Browser(first.url);
    const fields = formFields(await (await browser.get('/forgot-password')).text());
    const cookie = cookieOf(browser, 'agora_csrf');
    const statuses = await burst('/forgot-password', 100, (n) => ({ ...fields, email: `burst-${n}@example.com` }), cookie);
    const counts = tally(statuses);
    expect(counts[303] ?? 0).toBe(LINK_MAIL_LIMITS['reset-ip']);
    expect(counts[429] ?? 0).toBe(100 - LINK_MAIL_LIMITS['reset-ip']);
  }, 60_000);
});

describe('"send the link again" under 100 simultaneous requests', () => {
  it(`mails one account at most ${LINK_MAIL_LIMITS['verify-user']} links an hour and answers 429 to the rest`, async () => {
    nextHour();
    const user = await createUser(first, { verified: false });
    const browser = new Browser(first.url);
    expect((await signIn(browser, user.username, TEST_PASSWORD)).status).toBe(303);
    const { _csrf } = formFields(await (await browser.get('/account')).text());
    const statuses = await burst(
      '/account/email/verification',
      100,
      () => ({ _csrf: _csrf!, return_to: '/account' }),
      cookieOf(browser, 'agora_csrf', 'agora_session'),
    );
    const counts = tally(statuses);
    expect(counts[303] ?? 0).toBe(LINK_MAIL_LIMITS['verify-user']);
    expect(counts[429] ?? 0).toBe(100 - LINK_MAIL_LIMITS['verify-user']);
    expect(await linksOf(user.id, 'verify-email')).toBe(LINK_MAIL_LIMITS['verify-user']);
  }, 60_000);
});
