import { DataSource } from 'typeorm';
import { SignInThrottleSubjects1796700000200 } from '../src/database/migrations/1796700000200-sign-in-throttle-subjects.js';
import { SIGN_IN_LIMITS } from '../src/sessions/attempt-throttle.js';
import { Browser, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { startTestApp, TestApp } from './support/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function failTimes(browser: Browser, login: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) expect((await signIn(browser, login, 'wrong-password-guess')).status).toBe(401);
}

describe('sign-in throttling', () => {
  it(`locks an account for the rest of 15 minutes after ${SIGN_IN_LIMITS.account} failures, even for the right password`, async () => {
    const user = await createUser(t);
    const browser = new Browser(t.url);
    await failTimes(browser, user.username, SIGN_IN_LIMITS.account);

    const locked = await signIn(browser, user.username, TEST_PASSWORD);
    expect(locked.status).toBe(429);
    const retryAfter = Number(locked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(900);
    expect(await locked.text()).toContain('Too many failed attempts. Try again in 15 minutes.');
    expect(browser.cookie('agora_session')).toBeUndefined();

    t.clock.advance(retryAfter * 1000);
    expect((await signIn(browser, user.username, TEST_PASSWORD)).status).toBe(303);
  });

  it("counts a successful sign-in's own attempt back, but not the failures before it (someone else's guesses keep counting)", async () => {
    const user = await createUser(t);
    const attacker = new Browser(t.url);
    await failTimes(attacker, user.username, SIGN_IN_LIMITS.account - 1);
    // The owner signs in: that attempt is not a failure…
    expect((await signIn(new Browser(t.url), user.username, TEST_PASSWORD)).status).toBe(303);
    // …and the attacker's nine guesses still count: one more, then the account waits.
    await failTimes(attacker, user.username, 1);
    expect((await signIn(attacker, user.username, 'another-wrong-guess')).status).toBe(429);
    t.clock.advance(15 * 60_000 + 1000);
  });

  it('counts guesses by username and by e-mail address against the same account', async () => {
    const user = await createUser(t);
    const browser = new Browser(t.url);
    await failTimes(browser, user.username, SIGN_IN_LIMITS.account / 2);
    await failTimes(browser, user.email.toUpperCase(), SIGN_IN_LIMITS.account / 2);
    expect((await signIn(browser, user.email, TEST_PASSWORD)).status).toBe(429);
    expect((await signIn(browser, user.username, TEST_PASSWORD)).status).toBe(429);
    t.clock.advance(15 * 60_000 + 1000);
  });

  it(`limits one address to ${SIGN_IN_LIMITS.ip} failures across accounts`, async () => {
    t.clock.advance(15 * 60_000 + 1000); // earlier tests' failures from this address leave the window
    const browser = new Browser(t.url);
    for (let i = 0; i < SIGN_IN_LIMITS.ip; i++) expect((await signIn(browser, `nobody-${i}`, 'x-wrong-password')).status).toBe(401);
    const user = await createUser(t);
    expect((await signIn(browser, user.username, TEST_PASSWORD)).status).toBe(429);
    t.clock.advance(15 * 60_000);
  });

  it('stores failures without the login or the address in clear', async () => {
    await signIn(new Browser(t.url), 'someone-specific', 'wrong-password-guess');
    const dump = JSON.stringify(await t.get(DataSource).query('SELECT subject FROM counted_attempts'));
    expect(dump).not.toContain('someone-specific');
    expect(dump).not.toContain('127.0.0.1');
  });

  it('keeps counting failures recorded under the previous release’s subject names (login:, ip:) once migrated', async () => {
    const db = t.get(DataSource);
    const user = await createUser(t);
    const browser = new Browser(t.url);
    await failTimes(browser, user.username, SIGN_IN_LIMITS.account - 1);
    // As the previous release recorded them: the migration below renames them back.
    await db.query(`UPDATE counted_attempts SET subject = 'login:' || substr(subject, 17) WHERE subject LIKE 'sign-in-account:%'`);
    await db.query(`UPDATE counted_attempts SET subject = 'ip:' || substr(subject, 12) WHERE subject LIKE 'sign-in-ip:%'`);
    const runner = db.createQueryRunner();
    try {
      await new SignInThrottleSubjects1796700000200().up(runner);
    } finally {
      await runner.release();
    }
    await failTimes(browser, user.username, 1);
    expect((await signIn(browser, user.username, TEST_PASSWORD)).status).toBe(429);
    t.clock.advance(15 * 60_000);
  });
});

describe('session cookies', () => {
  it('are __Host- prefixed, HttpOnly, Secure and SameSite when BASE_URL is https, and HSTS is sent', async () => {
    const secure = await startTestApp({ BASE_URL: 'https://agora.example.com' });
    try {
      const user = await createUser(secure);
      const form = await fetch(`${secure.url}/sign-in`);
      expect(form.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
      const csrfCookie = form.headers.getSetCookie().find((c) => c.startsWith('__Host-agora_csrf='))!;
      expect(csrfCookie).toMatch(/HttpOnly/i);
      expect(csrfCookie).toMatch(/Secure/i);
      expect(csrfCookie).toMatch(/SameSite=Lax/i);
      expect(csrfCookie).toMatch(/Path=\//);
      expect(csrfCookie).not.toMatch(/Domain=/i);
      const secret = /^__Host-agora_csrf=([^;]+)/.exec(csrfCookie)![1]!;
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
      const res = await fetch(`${secure.url}/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: 'https://agora.example.com',
          cookie: `__Host-agora_csrf=${secret}`,
        },
        body: new URLSearchParams({ _csrf: csrf, login: user.username, password: TEST_PASSWORD, return_to: '/' }).toString(),
      });
      expect(res.status).toBe(303);
      const session = res.headers.getSetCookie().find((c) => c.startsWith('__Host-agora_session='))!;
      expect(session).toMatch(/HttpOnly/i);
      expect(session).toMatch(/SameSite=Lax/i);
      expect(session).toMatch(/Secure/i);
      expect(session).toMatch(/Path=\//);
      // An unprefixed cookie (which another host could have planted) is not a session.
      const value = /^__Host-agora_session=([^;]+)/.exec(session)![1]!;
      const planted = await fetch(`${secure.url}/account`, { redirect: 'manual', headers: { cookie: `agora_session=${value}` } });
      expect(planted.status).toBe(303);
      const real = await fetch(`${secure.url}/account`, { redirect: 'manual', headers: { cookie: `__Host-agora_session=${value}` } });
      expect(real.status).toBe(200);
    } finally {
      await secure.close();
    }
  });

  it('are not Secure over plain http (local development), where no HSTS is sent', async () => {
    const res = await fetch(`${t.url}/sign-in`);
    expect(res.headers.getSetCookie().find((c) => c.startsWith('agora_csrf='))).not.toMatch(/Secure/i);
    expect(res.headers.get('strict-transport-security')).toBeNull();
  });
});
