import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Browser, formFields, signIn } from './support/browser.js';
import { TEST_PASSWORD, createUser } from './support/fixtures.js';
import { REDIRECT_URI, registerApp, RegisteredApp } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';
import type { User } from '../src/users/user.model.js';

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

let t: TestApp;
let user: User;
let app: RegisteredApp;
let browser: Browser;

beforeAll(async () => {
  t = await startTestApp();
  user = await createUser(t);
  app = await registerApp(t, (await createUser(t)).id, ['openid', 'profile', 'read_api']);
  browser = new Browser(t.url);
  await browser.follow(await signIn(browser, user.username, TEST_PASSWORD));
});
afterAll(() => t.close());

function authorizeQuery(overrides: Record<string, string | string[] | null> = {}): string {
  const params: Record<string, string | string[] | null> = {
    response_type: 'code',
    client_id: app.clientId,
    redirect_uri: REDIRECT_URI,
    scope: 'openid read_api',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 'xyz',
    ...overrides,
  };
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === null) continue;
    for (const v of Array.isArray(value) ? value : [value]) search.append(name, v);
  }
  return `/oauth/authorize?${search.toString()}`;
}

describe('authorization requests that must not redirect', () => {
  it.each([
    ['an unknown client_id', { client_id: 'no-such-client' }, /No application is registered/],
    ['no client_id', { client_id: null }, /no client_id/],
    ['client_id twice', { client_id: ['a', 'b'] }, /no client_id, or more than one/],
    ['no redirect_uri', { redirect_uri: null }, /no redirect_uri/],
    ['an unregistered redirect_uri', { redirect_uri: 'https://evil.example/callback' }, /not registered/],
    ['a redirect_uri that differs by a trailing slash', { redirect_uri: `${REDIRECT_URI}/` }, /not registered/],
    ['redirect_uri twice', { redirect_uri: [REDIRECT_URI, REDIRECT_URI] }, /more than one/],
  ])('show an error page (400) for %s', async (_name, overrides, message) => {
    const res = await browser.get(authorizeQuery(overrides));
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toMatch(message);
  });
});

describe('authorization errors sent back to the client', () => {
  it.each([
    ['no code_challenge', { code_challenge: null }, 'invalid_request'],
    ['a code_challenge of 42 characters', { code_challenge: CHALLENGE.slice(1) }, 'invalid_request'],
    ['a code_challenge with padding', { code_challenge: `${CHALLENGE.slice(1)}=` }, 'invalid_request'],
    ['code_challenge_method=plain', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['no code_challenge_method', { code_challenge_method: null }, 'invalid_request'],
    ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
    ['no response_type', { response_type: null }, 'invalid_request'],
    ['an unknown scope', { scope: 'openid admin' }, 'invalid_scope'],
    ['a scope the application may not request', { scope: 'openid api' }, 'invalid_scope'],
    ['no scope', { scope: null }, 'invalid_scope'],
    ['scope twice', { scope: ['openid', 'read_api'] }, 'invalid_request'],
    ['code_challenge twice', { code_challenge: [CHALLENGE, CHALLENGE] }, 'invalid_request'],
  ])('redirect with %s → %s, echoing state and iss', async (_name, overrides, error) => {
    const res = await browser.get(authorizeQuery(overrides));
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(REDIRECT_URI);
    expect(location.searchParams.get('error')).toBe(error);
    expect(location.searchParams.get('error_description')).toBeTruthy();
    expect(location.searchParams.get('state')).toBe('xyz');
    expect(location.searchParams.get('iss')).toBe(t.url);
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('reports errors without state when none was sent', async () => {
    const res = await browser.get(authorizeQuery({ state: null, response_type: 'token' }));
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.has('state')).toBe(false);
    expect(location.searchParams.get('error')).toBe('unsupported_response_type');
  });

  it('answers a denial with access_denied', async () => {
    const consent = await browser.get(authorizeQuery({ state: 'deny-me' }));
    expect(consent.status).toBe(200);
    const res = await browser.post('/oauth/authorize', { ...formFields(await consent.text()), decision: 'deny' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('deny-me');
    expect(location.searchParams.get('iss')).toBe(t.url);
  });

  it('echoes state and carries nonce exactly, whatever characters they hold', async () => {
    const state = 'a b&c=d/é?#%20';
    const consent = await browser.get(authorizeQuery({ state, nonce: 'n-0S6_WzA2Mj' }));
    const fields = formFields(await consent.text());
    expect(fields.state).toBe(state);
    expect(fields.nonce).toBe('n-0S6_WzA2Mj');
    const res = await browser.post('/oauth/authorize', { ...fields, decision: 'approve' });
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('state')).toBe(state);
    expect(location.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('sign-in and consent pages', () => {
  // A user who never approves, so the consent page is always shown.
  let pagesUser: User;
  let pages: Browser;
  beforeAll(async () => {
    pagesUser = await createUser(t);
    pages = new Browser(t.url);
    await pages.follow(await signIn(pages, pagesUser.username, TEST_PASSWORD));
  });

  it('send a signed-out user to sign in, then back to the same request', async () => {
    const fresh = new Browser(t.url);
    const res = await fresh.get(authorizeQuery());
    expect(res.status).toBe(302);
    const signInUrl = new URL(res.headers.get('location')!, t.url);
    expect(signInUrl.pathname).toBe('/sign-in');
    const returnTo = signInUrl.searchParams.get('return_to')!;
    const signedIn = await signIn(fresh, pagesUser.username, TEST_PASSWORD, returnTo);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe(returnTo);
    const consent = await fresh.get(returnTo);
    expect(consent.status).toBe(200);
    const page = await consent.text();
    expect(page).toContain('Test Client');
    expect(page).toContain('Read all of your data through the API (no changes)');
    expect(page).toContain('Sign you in and confirm who you are');
  });

  it('carry anti-framing, same-origin referrer, isolation and CSP headers, with form-action allowing the client redirect', async () => {
    const consent = await pages.get(authorizeQuery());
    expect(consent.headers.get('x-frame-options')).toBe('DENY');
    expect(consent.headers.get('referrer-policy')).toBe('same-origin');
    expect(consent.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(consent.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    expect(consent.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = consent.headers.get('content-security-policy')!;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("form-action 'self' http://localhost:4000");
    const signInPage = await new Browser(t.url).get('/sign-in');
    expect(signInPage.headers.get('x-frame-options')).toBe('DENY');
    expect(signInPage.headers.get('content-security-policy')).toContain("form-action 'self';");
    expect(signInPage.headers.get('content-security-policy')).not.toContain('http://localhost:4000');
  });

  it('refuse a consent form without the CSRF token, and issue no code', async () => {
    const consent = await pages.get(authorizeQuery());
    const { _csrf, ...fields } = formFields(await consent.text());
    expect(_csrf).toBeTruthy();
    const forged = await pages.post('/oauth/authorize', { ...fields, decision: 'approve' });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('location')).toBeNull();
    const wrong = await pages.post('/oauth/authorize', { ...fields, _csrf: 'A'.repeat(43), decision: 'approve' });
    expect(wrong.status).toBe(403);
  });

  it('refuse a form posted from another origin even with a valid token', async () => {
    const consent = await pages.get(authorizeQuery());
    const res = await pages.post(
      '/oauth/authorize',
      { ...formFields(await consent.text()), decision: 'approve' },
      { origin: 'https://evil.example' },
    );
    expect(res.status).toBe(403);
  });

  it('refuse a form posted with Origin: null, or from a cross-site page that sends no Origin', async () => {
    const consent = await pages.get(authorizeQuery({ state: 'null-origin' }));
    const fields = { ...formFields(await consent.text()), decision: 'approve' };
    expect((await pages.post('/oauth/authorize', fields, { origin: 'null' })).status).toBe(403);
    const noOrigin = await pages.post('/oauth/authorize', fields, { origin: '', 'sec-fetch-site': 'cross-site' });
    expect(noOrigin.status).toBe(403);
    const same = await pages.post('/oauth/authorize', { ...fields, decision: 'deny' }, { origin: '', 'sec-fetch-site': 'same-origin' });
    expect(same.status).toBe(302);
    expect(new URL(same.headers.get('location')!).searchParams.get('error')).toBe('access_denied');
  });

  it("refuse another session's token, a token replayed after signing in again, and a cookie and field pair an attacker brings", async () => {
    const consent = await pages.get(authorizeQuery());
    const fields = { ...formFields(await consent.text()), decision: 'approve' };
    // The attacker's own session, signed in as another user, with its own cookie and token.
    const attacker = new Browser(t.url);
    await attacker.follow(await signIn(attacker, (await createUser(t)).username, TEST_PASSWORD));
    const attackerFields = formFields(await (await attacker.get(authorizeQuery())).text());
    // The victim's browser with the attacker's token in the form: refused.
    expect((await pages.post('/oauth/authorize', { ...fields, _csrf: attackerFields._csrf! })).status).toBe(403);
    // The victim's session with the attacker's CSRF cookie and matching token planted: refused (bound to the session).
    const planted = await fetch(`${t.url}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: t.url,
        cookie: `agora_session=${pages.cookie('agora_session')}; agora_csrf=${attacker.cookie('agora_csrf')}`,
      },
      body: new URLSearchParams({ ...fields, _csrf: attackerFields._csrf! }).toString(),
    });
    expect(planted.status).toBe(403);
    // A token from before signing in again belongs to the old session: refused.
    const again = new Browser(t.url);
    await again.follow(await signIn(again, pagesUser.username, TEST_PASSWORD));
    const old = formFields(await (await again.get(authorizeQuery())).text());
    expect((await again.post('/sign-out', { _csrf: old._csrf! })).status).toBe(303);
    await again.follow(await signIn(again, pagesUser.username, TEST_PASSWORD));
    expect((await again.post('/oauth/authorize', { ...old, decision: 'approve' })).status).toBe(403);
  });

  it('answer a wrong password with one generic message and status 401', async () => {
    const fresh = new Browser(t.url);
    const wrong = await signIn(fresh, user.username, 'not-the-password');
    const unknown = await signIn(fresh, 'nobody-at-all', 'not-the-password');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(await wrong.text()).toContain('Incorrect username, email or password.');
    expect(await unknown.text()).toContain('Incorrect username, email or password.');
    expect(fresh.cookie('agora_session')).toBeUndefined();
  });

  it('never send the user to another site after sign-in', async () => {
    const fresh = new Browser(t.url);
    const res = await signIn(fresh, user.email, TEST_PASSWORD, 'https://evil.example/phish');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
  });

  it('keep sessions in the database, storing only a hash of the cookie', async () => {
    const fresh = new Browser(t.url);
    await signIn(fresh, user.username, TEST_PASSWORD);
    const cookie = fresh.cookie('agora_session')!;
    expect(cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rows = await t.get(DataSource).query('SELECT token_hash FROM sessions WHERE user_id = $1', [user.id]);
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(cookie);
  });

  it('sign out ends the session', async () => {
    const fresh = new Browser(t.url);
    await signIn(fresh, user.username, TEST_PASSWORD);
    const home = await fresh.get('/');
    expect(home.status).toBe(200);
    const res = await fresh.post('/sign-out', formFields(await home.text()));
    expect(res.status).toBe(303);
    expect((await fresh.get(authorizeQuery())).headers.get('location')).toMatch(/^\/sign-in/);
  });
});

describe('OpenID Connect prompt and max_age', () => {
  let promptUser: User;
  let session: Browser;
  beforeAll(async () => {
    promptUser = await createUser(t);
    session = new Browser(t.url);
    await session.follow(await signIn(session, promptUser.username, TEST_PASSWORD));
    // Approve once, so the approval is remembered.
    const consent = await session.get(authorizeQuery());
    await session.post('/oauth/authorize', { ...formFields(await consent.text()), decision: 'approve' });
  });

  const redirectParams = (res: Response) => new URL(res.headers.get('location')!, t.url).searchParams;
  const authTimeOf = async (code: string): Promise<Date> =>
    (
      await t
        .get(DataSource)
        .query('SELECT auth_time FROM oauth_authorization_codes WHERE code_hash = $1', [createHash('sha256').update(code).digest('hex')])
    )[0].auth_time;

  it('prompt=none gives a signed-in user who approved before a code at once', async () => {
    const res = await session.get(authorizeQuery({ prompt: 'none' }));
    expect(res.status).toBe(302);
    expect(redirectParams(res).get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('prompt=none answers login_required when not signed in, consent_required when not approved, with state and iss', async () => {
    const signedOut = await new Browser(t.url).get(authorizeQuery({ prompt: 'none' }));
    expect(new URL(signedOut.headers.get('location')!).origin + new URL(signedOut.headers.get('location')!).pathname).toBe(REDIRECT_URI);
    expect(redirectParams(signedOut).get('error')).toBe('login_required');
    expect(redirectParams(signedOut).get('state')).toBe('xyz');
    expect(redirectParams(signedOut).get('iss')).toBe(t.url);

    const stranger = new Browser(t.url);
    await stranger.follow(await signIn(stranger, (await createUser(t)).username, TEST_PASSWORD));
    const notApproved = await stranger.get(authorizeQuery({ prompt: 'none' }));
    expect(redirectParams(notApproved).get('error')).toBe('consent_required');
    expect(redirectParams(notApproved).get('code')).toBeNull();
  });

  it.each([
    ['prompt=none with another value', { prompt: 'none login' }],
    ['an unknown prompt value', { prompt: 'sometimes' }],
    ['prompt twice', { prompt: ['login', 'consent'] }],
    ['a max_age that is not a number of seconds', { max_age: '1h' }],
  ])('%s → invalid_request', async (_name, overrides) => {
    const res = await session.get(authorizeQuery(overrides));
    expect(redirectParams(res).get('error')).toBe('invalid_request');
  });

  it('prompt=login shows the sign-in form to a signed-in user, then issues a code with the new auth_time; the old session ends', async () => {
    const before = await authTimeOf(redirectParams(await session.get(authorizeQuery())).get('code')!);
    t.clock.advance(10 * 60_000);
    const res = await session.get(authorizeQuery({ prompt: 'login' }));
    expect(res.status).toBe(302);
    const signInUrl = new URL(res.headers.get('location')!, t.url);
    expect(signInUrl.pathname).toBe('/sign-in');
    expect(signInUrl.searchParams.get('reauth')).toBe('1');
    expect(new URLSearchParams(signInUrl.searchParams.get('return_to')!.split('?')[1]).has('prompt')).toBe(false);

    const form = await session.get(signInUrl.pathname + signInUrl.search);
    expect(form.status).toBe(200);
    const page = await form.text();
    expect(page).toContain('asks you to sign in again');
    const sessionsBefore = await countSessions(promptUser.id);
    const signedIn = await session.post('/sign-in', { ...formFields(page), login: promptUser.username, password: TEST_PASSWORD });
    expect(signedIn.status).toBe(303);
    expect(await countSessions(promptUser.id)).toBe(sessionsBefore);

    const back = await session.get(signedIn.headers.get('location')!);
    const code = redirectParams(back).get('code')!;
    expect(code).toBeTruthy();
    expect((await authTimeOf(code)).getTime() - before.getTime()).toBeGreaterThanOrEqual(10 * 60_000);
  });

  it('prompt=consent asks again even though an approval is remembered', async () => {
    const res = await session.get(authorizeQuery({ prompt: 'consent' }));
    expect(res.status).toBe(200);
    const fields = formFields(await res.text());
    const approved = await session.post('/oauth/authorize', { ...fields, decision: 'approve' });
    expect(redirectParams(approved).get('code')).toBeTruthy();
  });

  it('max_age: a sign-in older than it asks for a new one (or login_required with prompt=none); a recent one does not', async () => {
    t.clock.advance(120_000);
    const stale = await session.get(authorizeQuery({ max_age: '60' }));
    const signInUrl = new URL(stale.headers.get('location')!, t.url);
    expect(signInUrl.pathname).toBe('/sign-in');
    expect(signInUrl.searchParams.get('reauth')).toBe('1');
    expect(signInUrl.searchParams.get('return_to')).not.toContain('max_age');
    expect(redirectParams(await session.get(authorizeQuery({ max_age: '60', prompt: 'none' }))).get('error')).toBe('login_required');
    expect(redirectParams(await session.get(authorizeQuery({ max_age: '3600' }))).get('code')).toBeTruthy();
  });

  async function countSessions(userId: string): Promise<number> {
    return (await t.get(DataSource).query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [userId]))[0].n;
  }
});
