import { DataSource } from 'typeorm';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service.js';
import { PASSKEY_LIMITS } from '../src/sessions/attempt-throttle.js';
import { RECENT_SIGN_IN_MS } from '../src/passkeys/passkey-settings.controller.js';
import { MAX_PASSKEYS } from '../src/passkeys/passkeys.service.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { authorizationRequest, discover, newUserAndApp, REDIRECT_URI } from './support/oauth.js';
import { SoftwareAuthenticator } from './support/software-authenticator.js';
import { startTestApp, TestApp } from './support/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const unescape = (value: string) =>
  value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The options a page's passkey form hands the browser. */
function optionsOf<T>(html: string, kind: 'registration' | 'sign-in' | 'second-factor'): T {
  const match = new RegExp(`data-passkey="${kind}"\\s+data-options="([^"]*)"`).exec(html);
  if (!match) throw new Error(`no ${kind} passkey form on the page`);
  return JSON.parse(unescape(match[1]!)) as T;
}

type CreationOptions = Parameters<SoftwareAuthenticator['create']>[0] & {
  authenticatorSelection: { residentKey: string; userVerification: string };
};
type RequestOptions = Parameters<SoftwareAuthenticator['get']>[0] & { userVerification: string };

async function signedInUser() {
  const user = await createUser(t);
  const browser = new Browser(t.url);
  expect((await signIn(browser, user.username, TEST_PASSWORD)).status).toBe(303);
  return { user, browser };
}

/** "Add a passkey" as the page's script does it: the options, the authenticator, the form post. */
async function addPasskey(browser: Browser, authenticator: SoftwareAuthenticator, name = ''): Promise<Response> {
  const page = await browser.get('/account/passkeys/new');
  expect(page.status).toBe(200);
  const html = await page.text();
  const credential = authenticator.create(optionsOf<CreationOptions>(html, 'registration'));
  const fields = formFields(html);
  return browser.post('/account/passkeys', { _csrf: fields._csrf!, name, credential: JSON.stringify(credential) });
}

/** The sign-in page's passkey form, answered by the authenticator (or with `tamper`'s change to the answer). */
async function signInWithPasskey(
  browser: Browser,
  authenticator: SoftwareAuthenticator,
  options: { returnTo?: string; tamper?: (credential: Record<string, unknown>) => Record<string, unknown> } = {},
): Promise<{ res: Response; credential: string; fields: Record<string, string> }> {
  const html = await (await browser.get(`/sign-in?return_to=${encodeURIComponent(options.returnTo ?? '/')}`)).text();
  const request = optionsOf<RequestOptions>(html, 'sign-in');
  const answer = authenticator.get(request);
  const credential = JSON.stringify(options.tamper ? options.tamper(answer) : answer);
  const fields = formFields(html);
  const res = await browser.post('/sign-in/passkey', { _csrf: fields._csrf!, return_to: fields.return_to!, credential });
  return { res, credential, fields };
}

async function newestSessionAmr(userId: string): Promise<string[]> {
  const rows: { amr: string[] }[] = await t
    .get(DataSource)
    .query('SELECT amr FROM sessions WHERE user_id = $1 ORDER BY created_at DESC LIMIT 1', [userId]);
  return rows[0]!.amr;
}

async function passkeyRows(
  userId: string,
): Promise<{ id: string; name: string; device_type: string; sign_count: string; last_used_at: Date | null }[]> {
  return t
    .get(DataSource)
    .query('SELECT id, name, device_type, sign_count, last_used_at FROM passkeys WHERE user_id = $1 ORDER BY created_at', [userId]);
}

async function noticesFor(userId: string): Promise<{ kind: string; method?: string; name?: string }[]> {
  const rows: { data: { userId: string; notice: { kind: string; method?: string; name?: string } } }[] = await t
    .get(DataSource)
    .query(`SELECT data FROM pgboss.job WHERE name = 'security-notices' ORDER BY created_on`);
  return rows.filter((r) => r.data.userId === userId).map((r) => r.data.notice);
}

describe('adding passkeys', () => {
  it('offers a discoverable credential that must verify its user, for BASE_URL’s host, and stores the verified one with a name', async () => {
    const { user, browser } = await signedInUser();
    const html = await (await browser.get('/account/passkeys/new')).text();
    const options = optionsOf<CreationOptions>(html, 'registration');
    expect(options.rp.id).toBe('127.0.0.1');
    expect(options.user.name).toBe(user.username);
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
    expect(html).toContain('<script src="/assets/passkeys.js" defer></script>');

    const authenticator = new SoftwareAuthenticator(t.url);
    const added = await addPasskey(browser, authenticator, '  Work laptop ');
    expect(added.status).toBe(303);
    // The account's first second factor: its recovery codes, shown once, come with it.
    expect(added.headers.get('location')).toBe('/account/two-factor/recovery-codes');
    const codesPage = await (await browser.get('/account/two-factor/recovery-codes')).text();
    expect(codesPage).toContain('Passkey “Work laptop” added.');
    expect(codesPage.match(/<li><code>[a-z0-9]{5}-[a-z0-9]{5}<\/code><\/li>/g)).toHaveLength(10);
    expect(await (await browser.get('/account/two-factor/recovery-codes')).text()).not.toMatch(/<li><code>/);
    expect(
      (
        (await t.get(DataSource).query('SELECT count(*)::int AS n FROM recovery_codes WHERE user_id = $1', [user.id])) as { n: number }[]
      )[0]!.n,
    ).toBe(10);
    const rows = await passkeyRows(user.id);
    expect(rows).toEqual([expect.objectContaining({ name: 'Work laptop', device_type: 'singleDevice', last_used_at: null })]);

    const security = await (await browser.get('/account/security')).text();
    expect(security).toContain('id="passkeys"');
    expect(security).toContain('Work laptop');
    expect(await noticesFor(user.id)).toEqual([{ kind: 'second-factor-enabled', method: 'passkey', name: 'Work laptop' }]);
  });

  it('names an unnamed passkey "Passkey N", and does not offer a device its own passkey again', async () => {
    const { user, browser } = await signedInUser();
    const phone = new SoftwareAuthenticator(t.url, { synced: true });
    expect((await addPasskey(browser, phone)).status).toBe(303);
    expect((await addPasskey(browser, new SoftwareAuthenticator(t.url))).status).toBe(303);
    expect((await passkeyRows(user.id)).map((r) => [r.name, r.device_type])).toEqual([
      ['Passkey 1', 'multiDevice'],
      ['Passkey 2', 'singleDevice'],
    ]);
    const options = optionsOf<CreationOptions>(await (await browser.get('/account/passkeys/new')).text(), 'registration');
    expect(options.excludeCredentials?.map((c) => c.id)).toEqual(expect.arrayContaining([phone.credentials[0]!.id]));
    expect(() => phone.create(options)).toThrow('InvalidStateError');
  });

  it('refuses an answer to another session’s challenge, a reused challenge, and one without user verification', async () => {
    const { user, browser } = await signedInUser();
    const other = await signedInUser();
    const authenticator = new SoftwareAuthenticator(t.url);
    // The other user's page issued this challenge: it is bound to their session.
    const theirs = optionsOf<CreationOptions>(await (await other.browser.get('/account/passkeys/new')).text(), 'registration');
    const mine = formFields(await (await browser.get('/account/passkeys/new')).text());
    const stolen = await browser.post('/account/passkeys', {
      _csrf: mine._csrf!,
      name: '',
      credential: JSON.stringify(authenticator.create(theirs)),
    });
    expect(stolen.status).toBe(422);
    expect(await stolen.text()).toContain('This passkey request expired or was already used. Try again.');

    // A challenge answered once cannot be answered again.
    const html = await (await browser.get('/account/passkeys/new')).text();
    const options = optionsOf<CreationOptions>(html, 'registration');
    const answer = JSON.stringify(authenticator.create(options));
    const fields = formFields(html);
    expect((await browser.post('/account/passkeys', { _csrf: fields._csrf!, name: 'A', credential: answer })).status).toBe(303);
    expect((await browser.post('/account/passkeys', { _csrf: fields._csrf!, name: 'B', credential: answer })).status).toBe(422);

    const unverified = new SoftwareAuthenticator(t.url);
    unverified.verifiesUser = false;
    const refused = await addPasskey(browser, unverified);
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('The passkey could not be verified.');
    expect((await passkeyRows(user.id)).map((r) => r.name)).toEqual(['A']);
  });

  it(`stops at ${MAX_PASSKEYS} passkeys, saying so before the browser makes another`, async () => {
    const { user, browser } = await signedInUser();
    for (let i = 0; i < MAX_PASSKEYS; i++) expect((await addPasskey(browser, new SoftwareAuthenticator(t.url))).status).toBe(303);
    const page = await browser.get('/account/passkeys/new');
    expect(page.status).toBe(409);
    const html = await page.text();
    expect(html).toContain(`An account can have ${MAX_PASSKEYS} passkeys. Remove one you no longer use first.`);
    expect(html).not.toContain('data-passkey="registration"');
    expect(await passkeyRows(user.id)).toHaveLength(MAX_PASSKEYS);
  });

  it('refuses an expired challenge', async () => {
    const { user, browser } = await signedInUser();
    const html = await (await browser.get('/account/passkeys/new')).text();
    const credential = new SoftwareAuthenticator(t.url).create(optionsOf<CreationOptions>(html, 'registration'));
    t.clock.advance(10 * 60_000 + 1000);
    try {
      // Sign in again (the session itself is no longer recent), then post the old answer.
      const again = new Browser(t.url);
      expect((await signIn(again, user.username, TEST_PASSWORD)).status).toBe(303);
      const fields = formFields(await (await again.get('/account/passkeys/new')).text());
      const res = await again.post('/account/passkeys', { _csrf: fields._csrf!, name: '', credential: JSON.stringify(credential) });
      expect(res.status).toBe(422);
      expect(await passkeyRows(user.id)).toEqual([]);
    } finally {
      t.clock.advance(15 * 60_000);
    }
  });

  it('asks for the password first when the sign-in was not recent (sudo mode), under the sign-in throttle', async () => {
    const { user, browser } = await signedInUser();
    t.clock.advance(RECENT_SIGN_IN_MS + 1000);
    const page = await browser.get('/account/passkeys/new');
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/account/passkeys/confirm-password?return_to=%2Faccount%2Fpasskeys%2Fnew');
    // The form post is refused the same way: no passkey added by a stale session.
    const fields = formFields(await (await browser.get('/account/passkeys/confirm-password?return_to=%2Faccount%2Fpasskeys%2Fnew')).text());
    expect((await browser.post('/account/passkeys', { _csrf: fields._csrf!, name: '', credential: '{}' })).status).toBe(303);

    const wrong = await browser.post('/account/passkeys/confirm-password', {
      _csrf: fields._csrf!,
      return_to: fields.return_to!,
      password: 'not-it',
    });
    expect(wrong.status).toBe(422);
    expect(await wrong.text()).toContain('Incorrect password.');
    const right = await browser.post('/account/passkeys/confirm-password', {
      _csrf: fields._csrf!,
      return_to: fields.return_to!,
      password: TEST_PASSWORD,
    });
    expect(right.status).toBe(303);
    expect(right.headers.get('location')).toBe('/account/passkeys/new');
    expect((await addPasskey(browser, new SoftwareAuthenticator(t.url))).status).toBe(303);
    expect(await passkeyRows(user.id)).toHaveLength(1);
    // Typing the password again is no sign-in: what OpenID Connect reports (auth_time, amr) stays as it was.
    const [session] = (await t
      .get(DataSource)
      .query('SELECT auth_time, amr, reauthenticated_at FROM sessions WHERE user_id = $1', [user.id])) as {
      auth_time: Date;
      amr: string[];
      reauthenticated_at: Date | null;
    }[];
    expect(session!.amr).toEqual(['pwd']);
    expect(session!.reauthenticated_at).not.toBeNull();
    expect(t.clock.now().getTime() - new Date(session!.auth_time).getTime()).toBeGreaterThan(RECENT_SIGN_IN_MS);
  });
});

describe('signing in with a passkey alone', () => {
  it('signs in without a username: swk and mfa for a synced passkey, to return_to, and records its use', async () => {
    const { user, browser } = await signedInUser();
    const phone = new SoftwareAuthenticator(t.url, { synced: true });
    await addPasskey(browser, phone, 'Phone');

    const fresh = new Browser(t.url);
    const html = await (await fresh.get('/sign-in')).text();
    expect(html).toContain('autocomplete="username webauthn"');
    const request = optionsOf<RequestOptions>(html, 'sign-in');
    expect(request.allowCredentials ?? []).toEqual([]);
    expect(request.userVerification).toBe('preferred'); // and required by the server: see below

    const { res } = await signInWithPasskey(fresh, phone, { returnTo: '/account/security' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/account/security');
    expect(await newestSessionAmr(user.id)).toEqual(['swk', 'mfa']);
    expect((await fresh.get('/account/security')).status).toBe(200);
    expect((await passkeyRows(user.id))[0]!.last_used_at).not.toBeNull();
  });

  it('signs in with hwk and mfa for a passkey bound to one device, and keeps its signature counter', async () => {
    const { user, browser } = await signedInUser();
    const key = new SoftwareAuthenticator(t.url, { counts: true });
    await addPasskey(browser, key, 'Security key');
    expect((await signInWithPasskey(new Browser(t.url), key)).res.status).toBe(303);
    expect(await newestSessionAmr(user.id)).toEqual(['hwk', 'mfa']);
    expect((await passkeyRows(user.id))[0]!.sign_count).toBe('1');
  });

  it('refuses a passkey that did not verify its user, saying why', async () => {
    const { user, browser } = await signedInUser();
    const key = new SoftwareAuthenticator(t.url);
    await addPasskey(browser, key);
    key.verifiesUser = false;
    const fresh = new Browser(t.url);
    const { res } = await signInWithPasskey(fresh, key);
    expect(res.status).toBe(401);
    const text = await res.text();
    expect(text).toContain('Your passkey did not check that it is you (with a PIN, fingerprint or face).');
    // The refused page offers passkeys again, with a new challenge.
    expect(optionsOf<RequestOptions>(text, 'sign-in').challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(fresh.cookie('agora_session')).toBeUndefined();
    expect((await passkeyRows(user.id))[0]!.last_used_at).toBeNull();
  });

  it('refuses a replayed answer, a forged signature, and an unknown or removed passkey', async () => {
    const { browser } = await signedInUser();
    const key = new SoftwareAuthenticator(t.url);
    await addPasskey(browser, key);

    const first = new Browser(t.url);
    const { res, credential, fields } = await signInWithPasskey(first, key);
    expect(res.status).toBe(303);
    const replay = await new Browser(t.url).post('/sign-in/passkey', { ...fields, credential });
    expect(replay.status).toBe(403); // the other browser has no CSRF cookie for that token
    const replayed = await first.post('/sign-in/passkey', { _csrf: fields._csrf!, return_to: '/', credential });
    expect([401, 403]).toContain(replayed.status);
    const again = new Browser(t.url);
    const page = formFields(await (await again.get('/sign-in')).text());
    const replayedHere = await again.post('/sign-in/passkey', { _csrf: page._csrf!, return_to: '/', credential });
    expect(replayedHere.status).toBe(401);
    expect(await replayedHere.text()).toContain('This passkey request expired or was already used.');

    const forged = await signInWithPasskey(new Browser(t.url), key, {
      tamper: (answer) => {
        const response = answer.response as Record<string, string>;
        const signature = Buffer.from(response.signature!, 'base64url');
        signature[signature.length - 1] ^= 1;
        return { ...answer, response: { ...response, signature: signature.toString('base64url') } };
      },
    });
    expect(forged.res.status).toBe(401);

    // A passkey this site never registered (made for it, but never sent to it).
    const stranger = new SoftwareAuthenticator(t.url);
    stranger.create({ challenge: 'AAAA', rp: { id: '127.0.0.1', name: 'Agora' }, user: { id: 'AAAA', name: 'nobody' } });
    const unknown = await signInWithPasskey(new Browser(t.url), stranger);
    expect(unknown.res.status).toBe(401);
    expect(await unknown.res.text()).toContain('This passkey is not registered with Agora');
  });

  it('refuses an answer signed for another site (origin) or another RP ID', async () => {
    const { browser } = await signedInUser();
    const key = new SoftwareAuthenticator(t.url);
    await addPasskey(browser, key);
    // The same key, used on a look-alike site that relays our challenge: the browser names that site.
    const phishing = new SoftwareAuthenticator('https://agora.example.net');
    phishing.credentials.push(...key.credentials);
    expect((await signInWithPasskey(new Browser(t.url), phishing)).res.status).toBe(401);
    // A credential scoped to another RP ID signs a different RP ID hash.
    const elsewhere = new SoftwareAuthenticator(t.url);
    elsewhere.credentials.push(...key.credentials.map((c) => ({ ...c, rpId: 'agora.example.net' })));
    const browser2 = new Browser(t.url);
    const html = await (await browser2.get('/sign-in')).text();
    const request = optionsOf<RequestOptions>(html, 'sign-in');
    const answer = elsewhere.get({ ...request, rpId: 'agora.example.net' });
    const fields = formFields(html);
    const res = await browser2.post('/sign-in/passkey', { _csrf: fields._csrf!, return_to: '/', credential: JSON.stringify(answer) });
    expect(res.status).toBe(401);
    expect(await res.text()).toContain('The passkey could not be verified.');
  });

  it("returns to an OAuth authorization request, and a refused answer's page keeps the sign-in page's form-action", async () => {
    const { user, app } = await newUserAndApp(t);
    const owner = new Browser(t.url);
    expect((await signIn(owner, user.username, TEST_PASSWORD)).status).toBe(303);
    const key = new SoftwareAuthenticator(t.url);
    expect((await addPasskey(owner, key)).status).toBe(303);

    const { url } = await authorizationRequest(await discover(t, app));
    const browser = new Browser(t.url);
    const toSignIn = await browser.get(url.pathname + url.search);
    const returnTo = new URL(toSignIn.headers.get('location')!, t.url).searchParams.get('return_to')!;
    expect(returnTo).toMatch(/^\/oauth\/authorize\?/);
    const page = await browser.get(`/sign-in?return_to=${encodeURIComponent(returnTo)}`);
    const csp = page.headers.get('content-security-policy');
    expect(csp).toContain(`form-action 'self' ${new URL(REDIRECT_URI).origin}`);
    const html = await page.text();
    const fields = formFields(html);

    const refused = await browser.post('/sign-in/passkey', { _csrf: fields._csrf!, return_to: returnTo, credential: '{}' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-security-policy')).toBe(csp);

    const answer = key.get(optionsOf<RequestOptions>(html, 'sign-in'));
    const signedIn = await browser.post('/sign-in/passkey', {
      _csrf: fields._csrf!,
      return_to: returnTo,
      credential: JSON.stringify(answer),
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe(returnTo);
    const consent = await browser.get(returnTo);
    expect(consent.status).toBe(200);
    expect(await consent.text()).toContain('Test Client');
  });

  it(`answers 429 after ${PASSKEY_LIMITS.ip} refused answers from one address`, async () => {
    t.clock.advance(15 * 60_000 + 1000);
    const browser = new Browser(t.url);
    const fields = formFields(await (await browser.get('/sign-in')).text());
    for (let i = 0; i < PASSKEY_LIMITS.ip; i++) {
      expect((await browser.post('/sign-in/passkey', { _csrf: fields._csrf!, return_to: '/', credential: '{"id":"x"}' })).status).toBe(401);
    }
    const throttled = await browser.post('/sign-in/passkey', { _csrf: fields._csrf!, return_to: '/', credential: '{}' });
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await throttled.text()).toContain('Too many failed attempts.');
    t.clock.advance(15 * 60_000 + 1000);
  });
});

describe('naming and removing passkeys', () => {
  it('renames a passkey, with the error beside the field for an empty name', async () => {
    const { user, browser } = await signedInUser();
    await addPasskey(browser, new SoftwareAuthenticator(t.url), 'Old');
    const [row] = await passkeyRows(user.id);
    const fields = formFields(await (await browser.get(`/account/passkeys/${row!.id}/rename`)).text());
    const empty = await browser.post(`/account/passkeys/${row!.id}/rename`, { _csrf: fields._csrf!, name: '   ' });
    expect(empty.status).toBe(422);
    expect(await empty.text()).toContain('id="passkey-name-error"');
    const renamed = await browser.post(`/account/passkeys/${row!.id}/rename`, { _csrf: fields._csrf!, name: 'New name' });
    expect(renamed.status).toBe(303);
    expect((await passkeyRows(user.id))[0]!.name).toBe('New name');
  });

  it('removes a passkey after a confirmation page: it no longer signs in, and the owner is told', async () => {
    const { user, browser } = await signedInUser();
    const key = new SoftwareAuthenticator(t.url);
    await addPasskey(browser, key, 'Gone soon');
    const [row] = await passkeyRows(user.id);
    const confirm = await browser.get(`/account/passkeys/${row!.id}/remove`);
    expect(confirm.status).toBe(200);
    const html = await confirm.text();
    expect(html).toContain('Remove “Gone soon”?');
    const removed = await browser.post(`/account/passkeys/${row!.id}/remove`, { _csrf: formFields(html)._csrf! });
    expect(removed.status).toBe(303);
    expect(await passkeyRows(user.id)).toEqual([]);
    expect(await noticesFor(user.id)).toContainEqual({ kind: 'second-factor-disabled', method: 'passkey', name: 'Gone soon' });
    expect((await signInWithPasskey(new Browser(t.url), key)).res.status).toBe(401);
  });

  it('removes the recovery codes with the last second factor (no app, no other passkey)', async () => {
    const { user, browser } = await signedInUser();
    await addPasskey(browser, new SoftwareAuthenticator(t.url), 'One');
    await addPasskey(browser, new SoftwareAuthenticator(t.url), 'Two');
    const db = t.get(DataSource);
    const codes = async () =>
      ((await db.query('SELECT count(*)::int AS n FROM recovery_codes WHERE user_id = $1', [user.id])) as { n: number }[])[0]!.n;
    const remove = async (id: string) => {
      const fields = formFields(await (await browser.get(`/account/passkeys/${id}/remove`)).text());
      expect((await browser.post(`/account/passkeys/${id}/remove`, { _csrf: fields._csrf! })).status).toBe(303);
    };
    // The first passkey came with ten recovery codes; the second made none.
    expect(await codes()).toBe(10);
    const [one, two] = await passkeyRows(user.id);
    await remove(one!.id);
    expect(await codes()).toBe(10);
    await remove(two!.id);
    expect(await codes()).toBe(0);
  });

  it("cannot see, rename or remove someone else's passkey", async () => {
    const owner = await signedInUser();
    await addPasskey(owner.browser, new SoftwareAuthenticator(t.url), 'Mine');
    const [row] = await passkeyRows(owner.user.id);
    const { browser } = await signedInUser();
    expect((await browser.get(`/account/passkeys/${row!.id}/rename`)).status).toBe(404);
    expect((await browser.get(`/account/passkeys/${row!.id}/remove`)).status).toBe(404);
    const fields = formFields(await (await browser.get('/account/security')).text());
    expect((await browser.post(`/account/passkeys/${row!.id}/remove`, { _csrf: fields._csrf! })).status).toBe(404);
    expect((await browser.get('/account/passkeys/not-a-uuid/rename')).status).toBe(404);
    expect(await passkeyRows(owner.user.id)).toHaveLength(1);
  });
});

describe('a passkey as the second step', () => {
  /** The password step of a user with a second factor: the browser is sent to the second step. */
  async function passwordStep(browser: Browser, username: string, returnTo = '/'): Promise<string> {
    const res = await signIn(browser, username, TEST_PASSWORD, returnTo);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/sign-in/second-factor');
    return (await browser.get('/sign-in/second-factor')).text();
  }

  async function answerSecondStep(browser: Browser, html: string, answer: Record<string, unknown>): Promise<Response> {
    return browser.post('/sign-in/second-factor/passkey', { _csrf: formFields(html)._csrf!, credential: JSON.stringify(answer) });
  }

  it("completes a sign-in after the password with one of the user's passkeys (pwd, hwk, mfa), without needing user verification", async () => {
    const { user, browser } = await signedInUser();
    const key = new SoftwareAuthenticator(t.url);
    await addPasskey(browser, key, 'Key');
    key.verifiesUser = false; // a second factor: its presence is enough

    const fresh = new Browser(t.url);
    const html = await passwordStep(fresh, user.username, '/account/security');
    expect(fresh.cookie('agora_session')).toBeUndefined();
    const options = optionsOf<RequestOptions>(html, 'second-factor');
    expect(options.allowCredentials?.map((c) => c.id)).toEqual([key.credentials[0]!.id]);
    expect(html).toContain('Use a passkey');

    const done = await answerSecondStep(fresh, html, key.get(options));
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/account/security');
    expect(await newestSessionAmr(user.id)).toEqual(['pwd', 'hwk', 'mfa']);
    expect((await fresh.get('/account/security')).status).toBe(200);
  });

  it("refuses another user's passkey, and a replayed answer, counting them against the pending sign-in", async () => {
    const owner = await signedInUser();
    const ownKey = new SoftwareAuthenticator(t.url);
    await addPasskey(owner.browser, ownKey);
    const other = await signedInUser();
    const otherKey = new SoftwareAuthenticator(t.url);
    await addPasskey(other.browser, otherKey);

    const browser = new Browser(t.url);
    const html = await passwordStep(browser, owner.user.username);
    const options = optionsOf<RequestOptions>(html, 'second-factor');
    // The other user's key, answering this pending sign-in's challenge (the browser would not offer it).
    const foreign = await answerSecondStep(browser, html, otherKey.get({ ...options, allowCredentials: [] }));
    expect(foreign.status).toBe(401);
    expect(await foreign.text()).toContain('This passkey is not registered with Agora for your account.');
    expect(browser.cookie('agora_session')).toBeUndefined();

    // Each page's challenge is used once: the owner's answer to the first one is refused after the foreign one used it.
    const replayed = await answerSecondStep(browser, html, ownKey.get(options));
    expect(replayed.status).toBe(401);
    expect(await replayed.text()).toContain('This passkey request expired or was already used.');

    // A challenge of the sign-in page (anyone's) is no second step either.
    const signInPage = await (await new Browser(t.url).get('/sign-in')).text();
    const wrongPurpose = await answerSecondStep(browser, html, ownKey.get(optionsOf<RequestOptions>(signInPage, 'sign-in')));
    expect(wrongPurpose.status).toBe(401);
    const [pending] = (await t.get(DataSource).query('SELECT failures FROM pending_sign_ins WHERE user_id = $1', [owner.user.id])) as {
      failures: number;
    }[];
    expect(pending!.failures).toBe(3);

    const again = await (await browser.get('/sign-in/second-factor')).text();
    const done = await answerSecondStep(browser, again, ownKey.get(optionsOf<RequestOptions>(again, 'second-factor')));
    expect(done.status).toBe(303);
    expect(await newestSessionAmr(owner.user.id)).toEqual(['pwd', 'hwk', 'mfa']);
  });

  it('steps up a signed-in session when an application asks for a passkey (require=phr)', async () => {
    const { user, browser } = await signedInUser();
    const phone = new SoftwareAuthenticator(t.url, { synced: true });
    await addPasskey(browser, phone);
    // The session signed in with the password alone (before the passkey existed): an application now asks for phr.
    const asked = await browser.get(`/sign-in/second-factor?return_to=${encodeURIComponent('/account/security')}&require=phr`);
    expect(asked.status).toBe(303);
    expect(asked.headers.get('location')).toBe('/sign-in/second-factor');
    const html = await (await browser.get('/sign-in/second-factor')).text();
    expect(html).toContain('asks you to confirm it is you with a passkey');
    const sessionBefore = browser.cookie('agora_session');
    const done = await answerSecondStep(browser, html, phone.get(optionsOf<RequestOptions>(html, 'second-factor')));
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/account/security');
    // The same session, stepped up: its methods now include the passkey.
    expect(browser.cookie('agora_session')).toBe(sessionBefore);
    const rows: { amr: string[] }[] = await t
      .get(DataSource)
      .query(`SELECT amr FROM sessions WHERE user_id = $1 AND 'swk' = ANY (amr)`, [user.id]);
    expect(rows.map((r) => r.amr)).toEqual([['pwd', 'swk', 'mfa']]);
  });
});

describe('challenges', () => {
  it('are purged by housekeeping once expired, and stored without anything about the visitor', async () => {
    const html = await (await new Browser(t.url).get('/sign-in')).text();
    const { challenge } = optionsOf<RequestOptions>(html, 'sign-in');
    const db = t.get(DataSource);
    const [row] = (await db.query('SELECT purpose, bound_to, user_id FROM webauthn_challenges WHERE challenge = $1', [
      challenge,
    ])) as unknown[];
    expect(row).toEqual({ purpose: 'sign-in', bound_to: 'anyone', user_id: null });
    t.clock.advance(10 * 60_000 + 1000);
    expect(await t.get(HousekeepingService).run()).not.toBeNull();
    expect(await db.query('SELECT 1 FROM webauthn_challenges WHERE challenge = $1', [challenge])).toEqual([]);
    expect(await db.query('SELECT 1 FROM webauthn_challenges WHERE expires_at <= $1', [t.clock.now()])).toEqual([]);
  });
});
