import { SIGN_UP_LIMIT } from '../src/sessions/attempt-throttle.js';
import { Browser, formFields } from './support/browser.js';
import { createUser } from './support/fixtures.js';
import { startTestApp, TestApp } from './support/test-app.js';

// Sign-up and "forgot password" must not tell whether an address has an account: the same status,
// headers and page, and the same time within noise (GitHub and GitLab answer both this way).

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

let n = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${++n}`;

/** What a client can compare of an answer: status, the headers that matter, the body without the CSRF token. */
async function observable(res: Response) {
  const body = (await res.text()).replace(/name="_csrf" value="[^"]*"/g, 'name="_csrf" value=""');
  const cookies = res.headers
    .getSetCookie()
    .map((line) => line.split('=')[0])
    .sort();
  return {
    status: res.status,
    location: res.headers.get('location'),
    cacheControl: res.headers.get('cache-control'),
    contentType: res.headers.get('content-type'),
    cookies,
    body,
  };
}

/** The answer to a POST and to the page it leads to, as one observable whole. */
async function answerTo(browser: Browser, path: string, form: Record<string, string>) {
  const posted = await browser.post(path, form);
  const first = await observable(posted);
  const next = first.location ? await observable(await browser.get(first.location)) : null;
  return { first, next };
}

async function timed<T>(run: () => Promise<T>): Promise<number> {
  const start = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Whether two medians are the same within noise: 30 ms, or a third of the larger, whichever is more. */
function withinNoise(a: number, b: number): boolean {
  return Math.abs(a - b) <= Math.max(30, Math.max(a, b) / 3);
}

const TRIES = 20;

describe('sign-up', () => {
  const signUpForm = async (browser: Browser, email: string) => ({
    ...formFields(await (await browser.get('/sign-up')).text()),
    name: 'Someone',
    username: unique('probe'),
    email,
    password: 'a-long-enough-passphrase',
  });

  it('answers a known and an unknown address identically: status, headers and page', async () => {
    const known = await createUser(t);
    const browser = new Browser(t.url);
    const forKnown = await answerTo(browser, '/sign-up', await signUpForm(browser, known.email));
    const forUnknown = await answerTo(browser, '/sign-up', await signUpForm(browser, `${unique('nobody')}@example.com`));
    expect(forKnown.first.status).toBe(303);
    expect(forUnknown).toEqual(forKnown);
  });

  it(`takes the same time for known and unknown addresses (medians of ${TRIES} tries each)`, async () => {
    const knownUsers = await Promise.all(Array.from({ length: TRIES }, () => createUser(t)));
    const times = { known: [] as number[], unknown: [] as number[] };
    const browser = new Browser(t.url);
    // Warm up (the first argon2 hash, prepared statements).
    await browser.post('/sign-up', await signUpForm(browser, `${unique('warm')}@example.com`));
    for (let i = 0; i < TRIES; i++) {
      // Both kinds count as an account created from this address: move past the hour's limit now and then.
      if (i % Math.floor(SIGN_UP_LIMIT.perAddress / 2 - 1) === 0) t.clock.advance(SIGN_UP_LIMIT.windowMs + 1000);
      const knownForm = await signUpForm(browser, knownUsers[i]!.email);
      const unknownForm = await signUpForm(browser, `${unique('nobody')}@example.com`);
      const order = i % 2 === 0 ? (['known', 'unknown'] as const) : (['unknown', 'known'] as const);
      for (const kind of order) {
        const form = kind === 'known' ? knownForm : unknownForm;
        times[kind].push(
          await timed(async () => {
            const res = await browser.post('/sign-up', form);
            expect(res.status).toBe(303);
            await res.arrayBuffer();
          }),
        );
      }
    }
    const known = median(times.known);
    const unknown = median(times.unknown);
    expect({ known, unknown, same: withinNoise(known, unknown) }).toMatchObject({ same: true });
  }, 120_000);
});

describe('forgot password', () => {
  const resetForm = async (browser: Browser, email: string) => ({
    ...formFields(await (await browser.get('/forgot-password')).text()),
    email,
  });

  it('answers a known and an unknown address identically: status, headers and page', async () => {
    const known = await createUser(t);
    const browser = new Browser(t.url);
    const forKnown = await answerTo(browser, '/forgot-password', await resetForm(browser, known.email));
    const forUnknown = await answerTo(browser, '/forgot-password', await resetForm(browser, `${unique('nobody')}@example.com`));
    expect(forKnown.first.status).toBe(303);
    expect(forUnknown).toEqual(forKnown);
  });

  it(`takes the same time for known and unknown addresses (medians of ${TRIES} tries each)`, async () => {
    const knownUsers = await Promise.all(Array.from({ length: TRIES }, () => createUser(t)));
    const times = { known: [] as number[], unknown: [] as number[] };
    const browser = new Browser(t.url);
    await browser.post('/forgot-password', await resetForm(browser, `${unique('warm')}@example.com`));
    for (let i = 0; i < TRIES; i++) {
      // 20 requests an hour from one network: move past the hour now and then.
      if (i % 8 === 0) t.clock.advance(3600_000 + 1000);
      const order = i % 2 === 0 ? (['known', 'unknown'] as const) : (['unknown', 'known'] as const);
      for (const kind of order) {
        const form = await resetForm(browser, kind === 'known' ? knownUsers[i]!.email : `${unique('nobody')}@example.com`);
        times[kind].push(
          await timed(async () => {
            const res = await browser.post('/forgot-password', form);
            expect(res.status).toBe(303);
            await res.arrayBuffer();
          }),
        );
      }
    }
    const known = median(times.known);
    const unknown = median(times.unknown);
    expect({ known, unknown, same: withinNoise(known, unknown) }).toMatchObject({ same: true });
  }, 120_000);
});
