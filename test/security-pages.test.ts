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
    expect(html).toContain('E-mail address changed to new-address@example.com.');
    expect((await signIn(new Browser(t.url), 'new-address@example.com', TEST_PASSWORD)).status).toBe(303);
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
    expect(created.headers.get('location')).toBe('/');
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
