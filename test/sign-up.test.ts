import { UsersService } from '../src/users/users.service.js';
import { Browser, formFields } from './support/browser.js';
import { createUser } from './support/fixtures.js';
import { startTestApp, TestApp } from './support/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function signUp(browser: Browser, values: Record<string, string>, returnTo = '/'): Promise<Response> {
  const form = await browser.get(`/sign-up?return_to=${encodeURIComponent(returnTo)}`);
  expect(form.status).toBe(200);
  return browser.post('/sign-up', { ...formFields(await form.text()), ...values });
}

const valid = { name: 'Grace Hopper', username: 'grace', email: 'grace@example.com', password: 'cobol-compiler-1959' };

describe('sign-up', () => {
  it('shows labelled fields with hints', async () => {
    const page = await (await new Browser(t.url).get('/sign-up')).text();
    for (const id of ['name', 'username', 'email', 'password']) {
      expect(page).toContain(`<label for="${id}">`);
      expect(page).toMatch(new RegExp(`<input\\s+id="${id}"\\s+name="${id}"`));
    }
    expect(page).toContain('At least 10 characters');
  });

  it('creates the account unverified, signs nobody in, and asks to check the e-mail, keeping where they were going for the sign-in', async () => {
    const browser = new Browser(t.url);
    const res = await signUp(browser, valid, '/oauth/authorize?client_id=x');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/check-email?about=sign-up&return_to=%2Foauth%2Fauthorize%3Fclient_id%3Dx');
    expect(browser.cookie('agora_session')).toBeUndefined();
    const user = await t.get(UsersService).getByUsername('grace');
    expect(user.name).toBe('Grace Hopper');
    expect(user.emailVerified).toBe(false);
    const page = await (await browser.get(res.headers.get('location')!)).text();
    expect(page).toContain('Check your e-mail');
    expect(page).toContain('href="/sign-in?return_to=%2Foauth%2Fauthorize%3Fclient_id%3Dx"');
  });

  it('answers a taken address exactly as a new one, and creates nothing', async () => {
    await createUser(t, { username: 'owner-of-address', email: 'owned@example.com' });
    const browser = new Browser(t.url);
    const res = await signUp(browser, { ...valid, username: 'squatter', email: 'OWNED@example.com' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/check-email?about=sign-up');
    expect(browser.cookie('agora_session')).toBeUndefined();
    await expect(t.get(UsersService).getByUsername('squatter')).rejects.toThrow(/No user/);
  });

  it.each([
    [{ username: 'taken-name' }, 'username', 'Username is already taken'],
    [{ username: 'no spaces allowed' }, 'username', 'Username must be 2 to 39 characters'],
    [{ email: 'not-an-email' }, 'email', 'Email must be a valid address'],
    [{ password: 'short' }, 'password', 'Password must be at least 10 characters'],
    [{ password: 'Password123' }, 'password', 'Password is too easy to guess'],
  ])('answers %j with 422 and the message beside the %s field, keeping what was typed', async (change, field, message) => {
    await createUser(t, { username: 'taken-name', email: 'taken@example.com' }).catch(() => undefined);
    const browser = new Browser(t.url);
    const values = { ...valid, username: 'fresh-user', email: 'fresh@example.com', ...change };
    const res = await signUp(browser, values);
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(page).toContain(`<p class="field-error" id="${field}-error" role="alert">${message}`);
    expect(page).toMatch(new RegExp(`id="${field}"[^>]*aria-invalid="true"`));
    expect(page).toContain(`value="${values.name}"`);
    expect(page).not.toContain(values.password);
    expect(browser.cookie('agora_session')).toBeUndefined();
  });

  it('refuses a form without the CSRF token', async () => {
    const browser = new Browser(t.url);
    await browser.get('/sign-up');
    const res = await browser.post('/sign-up', { ...valid, username: 'forged', email: 'forged@example.com' });
    expect(res.status).toBe(403);
    await expect(t.get(UsersService).getByUsername('forged')).rejects.toThrow(/No user/);
  });

  it('never sends the new user to another site', async () => {
    const res = await signUp(
      new Browser(t.url),
      { ...valid, username: 'wanderer', email: 'wanderer@example.com' },
      'https://evil.example/',
    );
    expect(res.headers.get('location')).toBe('/check-email?about=sign-up');
  });
});

describe('sign-up throttling', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('lets one address create 10 accounts an hour, then answers 429 with Retry-After until the hour has passed', async () => {
    const account = (n: number) => ({
      name: `Bulk ${n}`,
      username: `bulk-${n}`,
      email: `bulk-${n}@example.com`,
      password: 'a-long-enough-passphrase',
    });
    const signUpOn = async (values: Record<string, string>) => {
      const browser = new Browser(app.url);
      const form = await browser.get('/sign-up');
      return browser.post('/sign-up', { ...formFields(await form.text()), ...values });
    };
    for (let n = 1; n <= 10; n++) expect((await signUpOn(account(n))).status).toBe(303);

    const refused = await signUpOn(account(11));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000);
    const page = await refused.text();
    expect(page).toContain('Too many accounts were created from your network. Try again in 60 minutes.');
    expect(page).toContain('value="bulk-11"');
    await expect(app.get(UsersService).getByUsername('bulk-11')).rejects.toThrow();

    app.clock.advance(60 * 60_000 + 1000);
    expect((await signUpOn(account(11))).status).toBe(303);
  }, 60_000);
});
