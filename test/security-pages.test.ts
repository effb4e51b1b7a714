import { DataSource } from 'typeorm';
import { SecurityNotices } from '../src/security-notices/security-notices.js';
import { LINK_MAIL_LIMITS } from '../src/sessions/attempt-throttle.js';
import { UsersService } from '../src/users/users.service.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { startTestApp, TestApp } from './support/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

async function signedIn(username: string, password = TEST_PASSWORD, userAgent?: string): Promise<Browser> {
  const browser = new Browser(t.url);
  const form = formFields(await (await browser.get('/sign-in')).text());
  const res = await browser.post('/sign-in', { ...form, login: username, password }, userAgent ? { 'user-agent': userAgent } : {});
  expect(res.status).toBe(303);
  return browser;
}

async function securityForm(browser: Browser): Promise<Record<string, string>> {
  return formFields(await (await browser.get('/account/security')).text());
}

describe('changing the password', () => {
  it('reports a wrong current password and a weak new one at once, beside their fields', async () => {
    const user = await createUser(t);
    const browser = await signedIn(user.username);
    const { _csrf } = await securityForm(browser);
    const res = await browser.post('/account/password', { _csrf: _csrf!, current_password: 'not-it-at-all', new_password: 'short' });
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(page).toContain('<p class="field-error" id="current-password-error" role="alert">Current password is incorrect');
    expect(page).toContain('<p class="field-error" id="new-password-error" role="alert">Password must be at least 10 characters');
  });

  it('needs the current password, then signs out every other session and keeps this one', async () => {
    const user = await createUser(t);
    const here = await signedIn(user.username);
    const elsewhere = await signedIn(user.username);
    const { _csrf } = await securityForm(here);
    const { posted, html } = await here.submit('/account/password', {
      _csrf: _csrf!,
      current_password: TEST_PASSWORD,
      new_password: 'a-much-better-passphrase',
    });
    expect(posted.headers.get('location')).toBe('/account/security');
    expect(html).toContain('Password changed. Your other session was signed out.');
    // A reload shows the page, not the notice again, and changes nothing.
    expect(await (await here.get('/account/security')).text()).not.toContain('Password changed.');
    expect((await elsewhere.get('/account')).status).toBe(303);
    expect((await here.get('/account')).status).toBe(200);
    expect((await signIn(new Browser(t.url), user.username, TEST_PASSWORD)).status).toBe(401);
    expect((await signIn(new Browser(t.url), user.username, 'a-much-better-passphrase')).status).toBe(303);
  });
});

describe('a password change and its notice', () => {
  it('commit together: a change rolled back after the notice was enqueued keeps the old password and tells no one', async () => {
    const user = await createUser(t);
    const crash = new Error('the process died before the commit');
    await expect(
      t
        .get(UsersService)
        .changePassword(user.id, { currentPassword: TEST_PASSWORD, newPassword: 'a-much-better-passphrase' }, async (tx) => {
          await t.get(SecurityNotices).notify(user.id, { kind: 'password-changed' }, { tx });
          throw crash;
        }),
    ).rejects.toBe(crash);
    const jobs = (await t
      .get(DataSource)
      .query(`SELECT id FROM pgboss.job WHERE name = 'security-notices' AND data->>'userId' = $1`, [user.id])) as unknown[];
    expect(jobs).toEqual([]);
    expect((await signIn(new Browser(t.url), user.username, TEST_PASSWORD)).status).toBe(303);
  });

  it('is enqueued once by a change on the security page', async () => {
    const user = await createUser(t);
    const browser = await signedIn(user.username);
    const { _csrf } = await securityForm(browser);
    const res = await browser.post('/account/password', {
      _csrf: _csrf!,
      current_password: TEST_PASSWORD,
      new_password: 'a-much-better-passphrase',
    });
    expect(res.status).toBe(303);
    const jobs = (await t
      .get(DataSource)
      .query(
        `SELECT data FROM pgboss.job WHERE name = 'security-notices' AND data->>'userId' = $1 AND data->'notice'->>'kind' = 'password-changed'`,
        [user.id],
      )) as {
      data: { notice: unknown };
    }[];
    expect(jobs.map((job) => job.data.notice)).toEqual([{ kind: 'password-changed' }]);
  });
});

describe('guessing the current password', () => {
  it('is throttled like signing in, on both forms, and counts toward signing in', async () => {
    const user = await createUser(t);
    const browser = await signedIn(user.username);
    const { _csrf } = await securityForm(browser);
    for (let i = 0; i < 10; i++) {
      const form = i % 2 === 0 ? '/account/password' : '/account/email';
      const res = await browser.post(form, {
        _csrf: _csrf!,
        current_password: `guess-number-${i}`,
        new_password: 'a-new-passphrase-1',
        email: 'x@example.com',
      });
      expect(res.status).toBe(422);
    }
    const locked = await browser.post('/account/password', {
      _csrf: _csrf!,
      current_password: TEST_PASSWORD,
      new_password: 'a-new-passphrase-1',
    });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await locked.text()).toContain('Too many incorrect passwords.');
    expect((await signIn(new Browser(t.url), user.username, TEST_PASSWORD)).status).toBe(429);
    t.clock.advance(15 * 60_000 + 1000);
  });

  it('does not count a change refused for another reason than the current password', async () => {
    const user = await createUser(t);
    const browser = await signedIn(user.username);
    const { _csrf } = await securityForm(browser);
    for (let i = 0; i < 12; i++) {
      const res = await browser.post('/account/password', { _csrf: _csrf!, current_password: TEST_PASSWORD, new_password: 'short' });
      expect(res.status).toBe(422);
    }
  });
});

describe('changing the e-mail address', () => {
  it('counts "already used by another account" against the hourly link quota: past it, 429 with Retry-After', async () => {
    const user = await createUser(t);
    const other = await createUser(t);
    const browser = await signedIn(user.username);
    const { _csrf } = await securityForm(browser);
    const probe = () => browser.post('/account/email', { _csrf: _csrf!, email: other.email, current_password: TEST_PASSWORD });
    for (let i = 0; i < LINK_MAIL_LIMITS['verify-user']; i++) {
      const taken = await probe();
      expect(taken.status).toBe(422);
      expect(await taken.text()).toContain('This email address is already used by another account.');
    }
    const refused = await probe();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000);
    const page = await refused.text();
    expect(page).toContain('Too many changes of address in the last hour');
    expect(page).not.toContain('already used by another account');
    // A free address is refused too until the hour is over: probes and links share the quota.
    const free = await browser.post('/account/email', {
      _csrf: _csrf!,
      email: 'free-address@example.com',
      current_password: TEST_PASSWORD,
    });
    expect(free.status).toBe(429);
  });

  it('needs the current password and a free, valid address; reports both problems at once', async () => {
    const user = await createUser(t);
    const other = await createUser(t);
    const browser = await signedIn(user.username);
    const { _csrf } = await securityForm(browser);
    const both = await browser.post('/account/email', { _csrf: _csrf!, email: 'not-an-address', current_password: 'wrong-one-here' });
    expect(both.status).toBe(422);
    const page = await both.text();
    expect(page).toContain('id="email-error" role="alert">Email must be a valid address');
    expect(page).toContain('id="email-current-password-error" role="alert">Current password is incorrect');
    expect(page).toContain('value="not-an-address"');

    const taken = await browser.post('/account/email', {
      _csrf: _csrf!,
      email: other.email.toUpperCase(),
      current_password: TEST_PASSWORD,
    });
    expect(taken.status).toBe(422);
    expect(await taken.text()).toContain('This email address is already used by another account.');

    const { posted, html } = await browser.submit('/account/email', {
      _csrf: _csrf!,
      email: ' new-address@example.com ',
      current_password: TEST_PASSWORD,
    });
    expect(posted.status).toBe(303);
    // The new address takes effect when it follows its link (test/account-links.test.ts); the old one stays until then.
    expect(html).toContain('We sent a link to new-address@example.com.');
    expect(html).toContain('id="pending-email"');
    expect((await signIn(new Browser(t.url), 'new-address@example.com', TEST_PASSWORD)).status).toBe(401);
    expect((await signIn(new Browser(t.url), user.email, TEST_PASSWORD)).status).toBe(303);
  });
});

describe('active sessions', () => {
  it('lists where the user is signed in, marks this browser, and signs out everywhere after confirmation', async () => {
    const user = await createUser(t);
    const here = await signedIn(user.username, TEST_PASSWORD, FIREFOX);
    const elsewhere = await signedIn(user.username);
    const page = await (await here.get('/account/security')).text();
    expect(page).toContain('Firefox on Linux <span class="tag">this browser</span>');
    expect(page.match(/data-label="Browser"/g)).toHaveLength(2);
    expect(page).toContain('href="/account/sessions/sign-out-everywhere"');

    const confirm = await (await here.get('/account/sessions/sign-out-everywhere')).text();
    expect(confirm).toContain('All 2 of your sessions end');
    // Looking at the confirmation ends nothing.
    expect((await elsewhere.get('/account')).status).toBe(200);
    const done = await here.post('/account/sessions/sign-out-everywhere', formFields(confirm));
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/sign-in');
    expect((await here.get('/account')).status).toBe(303);
    expect((await elsewhere.get('/account')).status).toBe(303);
  });
});

describe('signing out one session', () => {
  it('ends the other browser it names, and only that one', async () => {
    const user = await createUser(t);
    const here = await signedIn(user.username, TEST_PASSWORD, FIREFOX);
    const phone = await signedIn(
      user.username,
      TEST_PASSWORD,
      'Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 Chrome/131.0 Mobile Safari/537.36',
    );
    const laptop = await signedIn(user.username);
    const page = await (await here.get('/account/security')).text();
    const forms = [...page.matchAll(/action="\/account\/sessions\/([0-9a-f-]{36})\/sign-out"/g)].map((m) => m[1]!);
    // One button per other browser; this browser signs out from the menu.
    expect(forms).toHaveLength(2);
    const phoneRow = page.split('<tr>').find((row) => row.includes('Chrome on Android'))!;
    const phoneSession = /sessions\/([0-9a-f-]{36})\/sign-out/.exec(phoneRow)![1]!;

    const done = await here.post(`/account/sessions/${phoneSession}/sign-out`, { _csrf: formFields(page)._csrf! });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/account/security#sessions');
    expect(await (await here.get('/account/security')).text()).toContain('Signed out Chrome on Android');
    expect((await phone.get('/account')).status).toBe(303);
    expect((await laptop.get('/account')).status).toBe(200);
    expect((await here.get('/account')).status).toBe(200);

    // Again, or someone else's session, or not an id: not found, nothing ends.
    expect((await here.post(`/account/sessions/${phoneSession}/sign-out`, { _csrf: formFields(page)._csrf! })).status).toBe(404);
    const other = await createUser(t);
    const theirs = await signedIn(other.username);
    const theirPage = await (await theirs.get('/account/security')).text();
    const theirSession = /sessions\/([0-9a-f-]{36})\/sign-out/.exec(page.replace(phoneRow, ''))![1]!;
    expect(theirPage).not.toContain(theirSession);
    expect((await theirs.post(`/account/sessions/${theirSession}/sign-out`, { _csrf: formFields(theirPage)._csrf! })).status).toBe(404);
    expect((await laptop.get('/account')).status).toBe(200);
    expect((await here.post('/account/sessions/not-a-session/sign-out', { _csrf: formFields(page)._csrf! })).status).toBe(404);
    // Without the CSRF token: refused.
    expect((await here.post(`/account/sessions/${theirSession}/sign-out`, {})).status).toBe(403);
  });
});

describe('return_to after signing in', () => {
  const variants = [
    '/..//evil.example',
    '/.//evil.example',
    '/a/..//evil.example',
    '/%2e%2e//evil.example',
    '//evil.example',
    '/%2E%2E//evil.example/x',
  ];

  it.each(variants)('keeps %j on the site for a visitor who is already signed in', async (value) => {
    const user = await createUser(t);
    const browser = await signedIn(user.username);
    for (const path of ['/sign-in', '/sign-up']) {
      const res = await browser.get(`${path}?return_to=${encodeURIComponent(value)}`);
      expect(res.status).toBe(303);
      expect(new URL(res.headers.get('location')!, t.url).origin).toBe(t.url);
      expect(res.headers.get('location')!.startsWith('//')).toBe(false);
    }
  });

  it.each(variants)('keeps %j on the site after signing in and after signing up', async (value) => {
    const user = await createUser(t);
    const browser = new Browser(t.url);
    const res = await signIn(browser, user.username, TEST_PASSWORD, value);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');

    const fresh = new Browser(t.url);
    const form = formFields(await (await fresh.get(`/sign-up?return_to=${encodeURIComponent(value)}`)).text());
    const suffix = Math.random().toString(36).slice(2, 8);
    const created = await fresh.post('/sign-up', {
      ...form,
      return_to: value,
      name: 'Redirect Tester',
      username: `redir-${suffix}`,
      email: `redir-${suffix}@example.com`,
      password: 'a-long-enough-passphrase',
    });
    expect(created.status).toBe(303);
    expect(created.headers.get('location')).toBe('/check-email?about=sign-up');
  });
});

describe('error pages', () => {
  it('shows browsers an HTML page for an unknown address, and gives API clients JSON', async () => {
    const page = await fetch(`${t.url}/acount`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).toContain('Page not found');

    const api = await fetch(`${t.url}/acount`);
    expect(api.status).toBe(404);
    expect(await api.json()).toEqual({ message: '404 Not Found' });
    const underApi = await fetch(`${t.url}/api/nope`, { headers: { accept: 'text/html' } });
    expect(underApi.headers.get('content-type')).toMatch(/json/);
  });

  it('shows a browser a 405 page with Allow for an address that takes another method', async () => {
    const res = await fetch(`${t.url}/account/password`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.text()).toContain('Not available');
  });

  it('answers a refused form with a 403 page', async () => {
    const user = await createUser(t);
    const browser = await signedIn(user.username);
    const res = await browser.post('/account/password', { current_password: TEST_PASSWORD, new_password: 'another-passphrase-1' });
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('Form expired');
  });
});

describe('sign-up', () => {
  it('reports every invalid field at once, beside each field', async () => {
    const browser = new Browser(t.url);
    const form = formFields(await (await browser.get('/sign-up')).text());
    const res = await browser.post('/sign-up', { ...form, name: '', username: 'a', email: 'nope', password: 'short' });
    expect(res.status).toBe(422);
    const page = await res.text();
    for (const id of ['name', 'username', 'email', 'password']) expect(page).toContain(`id="${id}-error" role="alert"`);
  });
});
