import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, createUserWithToken, TEST_PASSWORD } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { runCli } from './support/processes.js';
import { startTestApp, TestApp } from './support/test-app.js';
import type { User } from '../src/users/user.model.js';
import { PersonalTokensService } from '../src/personal-tokens/personal-tokens.service.js';
import { UsersService } from '../src/users/users.service.js';

let t: TestApp;
let user: User;
let browser: Browser;
beforeAll(async () => {
  t = await startTestApp();
  user = await createUser(t, { name: 'Ada Account' });
  browser = new Browser(t.url);
  await signIn(browser, user.username, TEST_PASSWORD);
});
afterAll(() => t.close());

/** Posts the token form of the account page (multi-valued `scopes` as repeated fields). */
async function createToken(values: { name: string; scopes: string[]; expires_at?: string }): Promise<Response> {
  const page = await browser.get('/account');
  const { _csrf } = formFields(await page.text());
  const body = new URLSearchParams({ _csrf: _csrf!, name: values.name, expires_at: values.expires_at ?? '' });
  for (const scope of values.scopes) body.append('scopes', scope);
  return browser.post('/account/tokens', body);
}

/** Creates a token through the form and opens the page it leads to (which shows the token, once). */
async function createdTokenPage(values: { name: string; scopes: string[]; expires_at?: string }): Promise<string> {
  const res = await createToken(values);
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe('/account');
  return (await browser.get('/account')).text();
}

describe('the account page', () => {
  it('asks a signed-out visitor to sign in first, then comes back', async () => {
    const res = await new Browser(t.url).get('/account');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/sign-in?return_to=%2Faccount');
  });

  it('shows the profile', async () => {
    const page = await (await browser.get('/account')).text();
    expect(page).toContain('Ada Account');
    expect(page).toContain(`@${user.username}`);
    expect(page).toContain(user.email);
    expect(page).toContain('You have no active personal access tokens.');
  });

  it('creates a token, shows it once with a warning, and the token works on the API', async () => {
    const page = await createdTokenPage({ name: 'deploy script', scopes: ['read_api'], expires_at: '2099-12-31' });
    const token = /<code id="new-token" class="secret">(agora_pat_[0-9A-Za-z]+)<\/code\s*>/.exec(page)?.[1];
    expect(token).toBeDefined();
    expect(page).toContain('Copy it now: it will not be shown again.');
    expect(page).toContain('data-copy="new-token"');

    const api = await graphql(t.url, '{ viewer { name } }', { privateToken: token! });
    expect(api.body.data?.viewer.name).toBe('Ada Account');

    const later = await (await browser.get('/account')).text();
    expect(later).not.toContain(token!);
    expect(later).toMatch(/<td[^>]*>deploy script<\/td>/);
    expect(later).toContain('<span class="tag">read_api</span>');
    expect(later).toMatch(/<td[^>]*>2099-12-31<\/td>/);
  });

  it.each([
    [{ name: '', scopes: ['api'] }, 'token-name-error', 'Name must be 1 to 100 characters'],
    [{ name: 'no scopes', scopes: [] }, 'scopes-error', 'Scopes must be one or more of: api, read_api'],
    [{ name: 'bad scope', scopes: ['openid'] }, 'scopes-error', 'Scopes must be one or more of'],
    [{ name: 'past', scopes: ['api'], expires_at: '2001-01-01' }, 'token-expires-error', 'Expiry date must be in the future'],
  ])('answers %j with 422 and the message beside the field', async (values, id, message) => {
    const res = await createToken(values);
    expect(res.status).toBe(422);
    expect(await res.text()).toContain(`<p class="field-error" id="${id}" role="alert">${message}`);
  });

  it('revokes a token after confirmation; the very next API request fails', async () => {
    const created = await createdTokenPage({ name: 'to revoke', scopes: ['api'] });
    const token = /(agora_pat_[0-9A-Za-z]+)/.exec(created)![1]!;
    const id = /href="\/account\/tokens\/([0-9a-f-]{36})\/revoke"/.exec(created)![1]!;
    expect((await graphql(t.url, '{ viewer { id } }', { privateToken: token })).status).toBe(200);

    const confirm = await browser.get(`/account/tokens/${id}/revoke`);
    expect(confirm.status).toBe(200);
    const confirmPage = await confirm.text();
    expect(confirmPage).toContain('Revoke “to revoke”?');
    const { posted, html } = await browser.submit(`/account/tokens/${id}/revoke`, formFields(confirmPage));
    expect(posted.status).toBe(303);
    expect(html).toContain('Token “to revoke” revoked.');
    // A revoked token has no confirmation page any more, and revoking again changes nothing.
    expect((await browser.get(`/account/tokens/${id}/revoke`)).status).toBe(404);
    expect((await graphql(t.url, '{ viewer { id } }', { privateToken: token })).status).toBe(401);
  });

  it("cannot revoke another user's token", async () => {
    const other = await createUserWithToken(t);
    const page = await browser.get('/account');
    const res = await browser.post(`/account/tokens/${other.tokenId}/revoke`, formFields(await page.text()));
    expect(res.status).toBe(404);
    expect((await browser.get(`/account/tokens/${other.tokenId}/revoke`)).status).toBe(404);
    expect((await graphql(t.url, '{ viewer { id } }', { privateToken: other.token })).status).toBe(200);
  });

  it('refuses a forged form without the CSRF token', async () => {
    const res = await browser.post('/account/tokens', { name: 'forged', scopes: 'api' });
    expect(res.status).toBe(403);
  });
});

describe('the API explorer', () => {
  it('is for signed-in users, and is where a browser opening /graphql lands', async () => {
    expect((await new Browser(t.url).get('/explorer')).headers.get('location')).toBe('/sign-in?return_to=%2Fexplorer');
    const page = await browser.get('/explorer');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script src="/assets/explorer.js" defer></script>');
    const fromBrowser = await fetch(`${t.url}/graphql`, { headers: { accept: 'text/html,application/xhtml+xml' }, redirect: 'manual' });
    expect(fromBrowser.status).toBe(302);
    expect(fromBrowser.headers.get('location')).toBe('/explorer');
    expect((await fetch(`${t.url}/assets/explorer.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
  });
});

describe('editing the profile', () => {
  it('changes the display name, which the API then reports; refuses an empty one beside the field', async () => {
    const editor = await createUser(t, { name: 'Before Name' });
    const own = new Browser(t.url);
    await signIn(own, editor.username, TEST_PASSWORD);
    const submit = async (name: string) => {
      const page = await own.get('/account');
      const { _csrf } = formFields(await page.text());
      return own.post('/account/profile', { _csrf: _csrf!, name });
    };

    const saved = await submit('  After Name  ');
    expect(saved.status).toBe(303);
    const page = await (await own.follow(saved)).res.text();
    expect(page).toContain('Profile saved.');
    expect(page).toContain('value="After Name"');
    const { token } = await createTokenFor(editor.id);
    expect((await graphql(t.url, '{ viewer { name } }', { privateToken: token })).body.data?.viewer.name).toBe('After Name');

    const empty = await submit('   ');
    expect(empty.status).toBe(422);
    const errorPage = await empty.text();
    expect(errorPage).toMatch(/id="profile-name-error"[^>]*>[^<]*1 to 255 characters/);
    expect(errorPage).toContain('aria-invalid="true"');
  });

  it('turns reminders off and on again (the optional mail); mail about the seat itself has no switch', async () => {
    const reader = await createUser(t);
    const own = new Browser(t.url);
    await signIn(own, reader.username, TEST_PASSWORD);
    const reminders = async () => (await t.get(UsersService).findById(reader.id))?.mailReminders;
    const save = async (form: Record<string, string>) => {
      const { _csrf } = formFields(await (await own.get('/account')).text());
      return own.post('/account/mail', { _csrf: _csrf!, ...form });
    };

    const page = await (await own.get('/account')).text();
    expect(page).toMatch(/<input type="checkbox" name="reminders" value="on" checked \/>/);
    expect(page).toContain('Mail about your own registrations is always sent');
    expect(await reminders()).toBe(true);

    const off = await save({});
    expect(off.status).toBe(303);
    expect(await (await own.follow(off)).res.text()).toContain('E-mail settings saved: no more reminders.');
    expect(await reminders()).toBe(false);
    expect(await (await own.get('/account')).text()).toMatch(/<input type="checkbox" name="reminders" value="on" {2}\/>/);

    expect((await save({ reminders: 'on' })).status).toBe(303);
    expect(await reminders()).toBe(true);

    const forged = await own.post('/account/mail', { reminders: 'on' });
    expect(forged.status).toBe(403);
  });
});

// Last: closing a second app in this process breaks the first one's personal token checks ("Driver not Connected").
describe('the cap on active personal tokens (PERSONAL_TOKENS_MAX_ACTIVE)', () => {
  let capped: TestApp;
  beforeAll(async () => {
    capped = await startTestApp({ PERSONAL_TOKENS_MAX_ACTIVE: '3' });
  });
  afterAll(() => capped.close());

  it('says the limit, refuses a token past it in the dashboard and the CLI, and counts neither revoked nor expired tokens', async () => {
    const owner = await createUser(capped);
    const own = new Browser(capped.url);
    await signIn(own, owner.username, TEST_PASSWORD);
    const create = async (name: string) => {
      const { _csrf } = formFields(await (await own.get('/account')).text());
      return own.post('/account/tokens', new URLSearchParams({ _csrf: _csrf!, name, scopes: 'api', expires_at: '' }));
    };
    expect(await (await own.get('/account')).text()).toMatch(/You can have up to 3 active tokens \(you have 0\)/);

    const tokens = capped.get(PersonalTokensService);
    const tomorrow = new Date(capped.clock.now().getTime() + 86_400_000);
    const expiring = await tokens.create(owner.id, { name: 'expires tomorrow', scopes: ['api'], expiresAt: tomorrow });
    expect((await create('second')).status).toBe(303);
    expect((await create('third')).status).toBe(303);
    expect(await (await own.get('/account')).text()).toMatch(/You can have up to 3 active tokens \(you have 3\)/);

    const refused = await create('fourth');
    expect(refused.status).toBe(422);
    const page = await refused.text();
    expect(page).toContain(
      '<div class="alert error" role="alert">You already have 3 active personal access tokens, the most allowed: revoke one you no longer use, then create this one</div>',
    );
    expect(page).toContain('value="fourth"');
    const cli = await runCli(
      { ...capped.databaseEnv, PERSONAL_TOKENS_MAX_ACTIVE: '3' },
      'tokens:create',
      '--user',
      owner.username,
      '--name',
      'cli',
    );
    expect(cli.code).toBe(1);
    expect(cli.stderr).toBe(
      'agora: You already have 3 active personal access tokens, the most allowed: revoke one you no longer use, then create this one\n',
    );
    expect((await tokens.listForUser(owner.id)).map((token) => token.name).sort()).toEqual(['expires tomorrow', 'second', 'third']);

    // An expired token no longer counts, and neither does a revoked one.
    capped.clock.advance(2 * 86_400_000);
    expect(await (await own.get('/account')).text()).toMatch(/You can have up to 3 active tokens \(you have 2\)/);
    expect((await create('after expiry')).status).toBe(303);
    expect((await create('one too many')).status).toBe(422);
    await tokens.revoke((await tokens.listForUser(owner.id)).find((token) => token.name === 'second')!.id);
    expect((await create('after revoking')).status).toBe(303);
    expect(expiring.personalToken.name).toBe('expires tomorrow');
  });

  it('never lets concurrent creations overshoot the cap', async () => {
    const owner = await createUser(capped);
    const tokens = capped.get(PersonalTokensService);
    await tokens.create(owner.id, { name: 'first', scopes: ['api'] });
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => tokens.create(owner.id, { name: `racer ${i}`, scopes: ['api'] })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(
      Array(4).fill('TOO_MANY_TOKENS'),
    );
    expect(await tokens.listForUser(owner.id)).toHaveLength(3);
  });
});

function createTokenFor(userId: string): Promise<{ token: string }> {
  return t.get(PersonalTokensService).create(userId, { name: 'profile check', scopes: ['read_api'] });
}
