import { randomBytes, randomUUID } from 'node:crypto';
import * as client from 'openid-client';
import { DataSource } from 'typeorm';
import { hashSecret } from '../src/auth/secret-token.js';
import type { AuthMethod } from '../src/auth/authentication-methods.js';
import { SessionsService } from '../src/sessions/sessions.service.js';
import type { User } from '../src/users/user.model.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import {
  approveInBrowser,
  authorizationRequest,
  discover,
  discoverPublic,
  REDIRECT_URI,
  registerApp,
  registerPublicApp,
  RegisteredApp,
} from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';
import { Secret, TOTP } from 'otpauth';
import { TotpService } from '../src/two-factor/totp.service.js';

/**
 * OpenID Connect says how the user signed in (docs/account-security.md, "For client developers: acr and
 * amr"): `amr`, `acr` and `auth_time` in the id_token, checked by openid-client, and `acr_values` and
 * `max_age` honoured at the authorization endpoint.
 *
 * A sign-in with a second factor is made here without the second-step page: a session created by
 * `SessionsService.create(userId, amr)` with its cookie set in the test's browser, or a password session
 * raised by `SessionsService.stepUp(sessionId, amr)` as the second step does. A second factor is given
 * by writing its row (users.totp_*, or a passkeys row) directly.
 */
let t: TestApp;
let db: DataSource;
let app: RegisteredApp;
let config: client.Configuration;

beforeAll(async () => {
  t = await startTestApp();
  db = t.get(DataSource);
  const owner = await createUser(t);
  app = await registerApp(t, owner.id, ['openid', 'profile', 'email', 'api', 'offline_access']);
  config = await discover(t, app);
});
afterAll(() => t.close());

/** A browser signed in as `user` with these methods, and the session's id. */
async function signedIn(user: User, amr: AuthMethod[]): Promise<{ browser: Browser; sessionId: string }> {
  const { cookieValue } = await t.get(SessionsService).create(user.id, amr);
  const [row] = (await db.query(`SELECT id FROM sessions WHERE token_hash = $1`, [hashSecret(cookieValue)])) as { id: string }[];
  return { browser: new Browser(t.url, t.url, new Map([['agora_session', cookieValue]])), sessionId: row!.id };
}

async function giveTotp(user: User): Promise<void> {
  await db.query(`UPDATE users SET totp_secret = 'sealed-for-the-test', totp_enabled_at = now() WHERE id = $1`, [user.id]);
}

async function givePasskey(user: User): Promise<void> {
  await db.query(
    `INSERT INTO passkeys (id, user_id, credential_id, public_key, device_type, backed_up, name, created_at)
     VALUES ($1, $2, $3, '\\x00', 'multiDevice', true, 'Test key', now())`,
    [randomUUID(), user.id, randomBytes(24).toString('base64url')],
  );
}

/** An authorization request of openid-client's, with extra parameters (acr_values, max_age, prompt). */
async function request(extra: Record<string, string> = {}, scope = 'openid profile email api') {
  const base = await authorizationRequest(config, scope);
  for (const [name, value] of Object.entries(extra)) base.url.searchParams.set(name, value);
  return base;
}

/** Signs the user in through consent and redeems the code with openid-client, which validates the id_token. */
async function idTokenFor(user: User, browser: Browser, extra: Record<string, string> = {}, scope?: string) {
  const { url, codeVerifier, state, nonce } = await request(extra, scope);
  const callback = new URL(await approveInBrowser(t, url, user, browser));
  return client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: codeVerifier,
    expectedState: state,
    expectedNonce: nonce,
    idTokenExpected: true,
    ...(extra.max_age !== undefined ? { maxAge: Number(extra.max_age) } : {}),
  });
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

describe('amr, acr and auth_time in the id_token', () => {
  it('says pwd and aal1 for a password sign-in, with the sign-in time', async () => {
    const user = await createUser(t);
    const { browser } = await signedIn(user, ['pwd']);
    const signedInAt = seconds(t.clock.now());
    const tokens = await idTokenFor(user, browser);
    const claims = tokens.claims()!;
    expect(claims.amr).toEqual(['pwd']);
    expect(claims.acr).toBe('aal1');
    expect(Math.abs((claims.auth_time as number) - signedInAt)).toBeLessThanOrEqual(1);
  });

  it('says pwd, otp, mfa and aal2 after a second step, whose time becomes auth_time; a refresh keeps all three', async () => {
    const user = await createUser(t);
    await giveTotp(user);
    const { browser, sessionId } = await signedIn(user, ['pwd']);
    t.clock.advance(10 * 60_000);
    await t.get(SessionsService).stepUp(sessionId, ['pwd', 'otp', 'mfa']);
    const steppedUpAt = seconds(t.clock.now());
    const tokens = await idTokenFor(user, browser, { acr_values: 'aal2' }, 'openid profile offline_access');
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], acr: 'aal2' });
    expect(Math.abs((claims.auth_time as number) - steppedUpAt)).toBeLessThanOrEqual(1);

    t.clock.advance(5 * 60_000);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.claims()).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], acr: 'aal2', auth_time: claims.auth_time });
  });

  it('says phr for a passkey sign-in', async () => {
    const user = await createUser(t);
    await givePasskey(user);
    const { browser } = await signedIn(user, ['swk', 'mfa']);
    const claims = (await idTokenFor(user, browser, { acr_values: 'phr' })).claims()!;
    expect(claims).toMatchObject({ amr: ['swk', 'mfa'], acr: 'phr' });
  });

  it('records how the user signed in when they approve a device: the device grant’s id_token says so', async () => {
    const user = await createUser(t);
    const { browser } = await signedIn(user, ['pwd', 'otp', 'mfa']);
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid api' });
    const form = await browser.get('/oauth/device');
    const consent = await browser.post('/oauth/device', { ...formFields(await form.text()), user_code: started.user_code });
    await browser.submit('/oauth/device', { ...formFields(await consent.text()), decision: 'approve' });
    const tokens = await client.pollDeviceAuthorizationGrant(config, started);
    expect(tokens.claims()).toMatchObject({ sub: user.id, amr: ['pwd', 'otp', 'mfa'], acr: 'aal2' });
  });

  it('says email_verified true once the address is verified, in the id_token and at userinfo', async () => {
    const user = await createUser(t, { verified: false });
    const { browser } = await signedIn(user, ['pwd']);
    const before = await idTokenFor(user, browser);
    expect(before.claims()).toMatchObject({ email: user.email, email_verified: false });

    await db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [user.id]);
    const after = await idTokenFor(user, browser);
    expect(after.claims()).toMatchObject({ email: user.email, email_verified: true });
    expect(await client.fetchUserInfo(config, after.access_token, user.id)).toMatchObject({ email: user.email, email_verified: true });
  });
});

describe('acr_values', () => {
  /** The authorization endpoint's answer to a signed-in browser: where it sends it. */
  async function authorize(browser: Browser, extra: Record<string, string>) {
    const { url, state, codeVerifier } = await request(extra);
    const res = await browser.get(url.pathname + url.search);
    return { status: res.status, location: res.headers.get('location') ?? '', url, state, codeVerifier };
  }

  it('answers an application that demands aal2 for a user with no second factor with unmet_authentication_requirements', async () => {
    const user = await createUser(t);
    const { browser } = await signedIn(user, ['pwd']);
    const { status, location, state, codeVerifier } = await authorize(browser, { acr_values: 'aal2' });
    expect(status).toBe(302);
    expect(location.startsWith(REDIRECT_URI)).toBe(true);
    // openid-client reads the error off the callback, as an application would.
    const refused = client.authorizationCodeGrant(config, new URL(location), { pkceCodeVerifier: codeVerifier, expectedState: state });
    await expect(refused).rejects.toMatchObject({ error: 'unmet_authentication_requirements' });
    expect(new URL(location).searchParams.get('error_description')).toMatch(/no second factor/);
  });

  it('answers an application that registered itself on a page, with the error as a link back', async () => {
    const selfRegistered = await registerPublicApp(t, null);
    const publicConfig = await discoverPublic(t, selfRegistered.clientId);
    const { url } = await authorizationRequest(publicConfig);
    url.searchParams.set('acr_values', 'aal2');
    const user = await createUser(t);
    const { browser } = await signedIn(user, ['pwd']);
    const page = await browser.get(url.pathname + url.search);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('This application requires a second factor');
    expect(html).toContain('error=unmet_authentication_requirements');
  });

  it('sends a user who has a second factor to the second step, coming back to the same request', async () => {
    const user = await createUser(t);
    await giveTotp(user);
    const { browser } = await signedIn(user, ['pwd']);
    const { status, location, url } = await authorize(browser, { acr_values: 'aal2' });
    expect(status).toBe(302);
    const next = new URL(location, t.url);
    expect(next.pathname).toBe('/sign-in/second-factor');
    expect(next.searchParams.get('return_to')).toBe(url.pathname + url.search);
    expect(next.searchParams.has('require')).toBe(false);
  });

  it('takes a password-only user through the real second step and back: the id_token says pwd, otp, mfa and aal2', async () => {
    const user = await createUser(t);
    const totp = t.get(TotpService);
    await totp.startEnrolment(user.id);
    const { secret } = (await totp.enrolment(user.id, user.username))!;
    const code = (offset: number) =>
      TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: t.clock.now().getTime() + offset * 30_000 });
    await totp.confirm(user.id, code(0));
    t.clock.advance(60_000); // the confirming code is used up; the next step's code is a new one

    // The password and the code, through the pages; a session that then meets aal2 by itself.
    const browser = new Browser(t.url);
    const password = await signIn(browser, user.username, TEST_PASSWORD);
    expect(password.headers.get('location')).toMatch(/^\/sign-in\/second-factor/);
    const step = await browser.get(password.headers.get('location')!);
    const stepped = await browser.post('/sign-in/second-factor', { ...formFields(await step.text()), code: code(0) });
    expect(stepped.status).toBe(303);

    // A session of the same browser lowered to a password alone, then an application asks for aal2: the step-up.
    await t.get(DataSource).query(`UPDATE sessions SET amr = '{pwd}' WHERE user_id = $1`, [user.id]);
    t.clock.advance(60_000);
    const { url, codeVerifier, state, nonce } = await request({ acr_values: 'aal2' });
    const first = await browser.get(url.pathname + url.search);
    expect(first.status).toBe(302);
    const stepUp = first.headers.get('location')!;
    expect(new URL(stepUp, t.url).pathname).toBe('/sign-in/second-factor');
    // The step-up starts (a pending step of this session), then shows the second step.
    const started = await browser.get(stepUp);
    expect(started.status).toBe(303);
    const page = await browser.get(started.headers.get('location')!);
    expect(page.status).toBe(200);
    const done = await browser.post('/sign-in/second-factor', { ...formFields(await page.text()), code: code(0) });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(url.pathname + url.search);
    const steppedUpAt = seconds(t.clock.now());

    const consent = await browser.get(done.headers.get('location')!);
    expect(consent.status).toBe(200);
    const decided = await browser.post('/oauth/authorize', { ...formFields(await consent.text()), decision: 'approve' });
    expect(decided.status).toBe(302);
    const tokens = await client.authorizationCodeGrant(config, new URL(decided.headers.get('location')!), {
      pkceCodeVerifier: codeVerifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], acr: 'aal2' });
    expect(Math.abs((claims.auth_time as number) - steppedUpAt)).toBeLessThanOrEqual(1);
  });

  it('asks for a passkey (require=phr) when only phishing-resistant will do, and refuses a user without one', async () => {
    const user = await createUser(t);
    await giveTotp(user);
    const { browser } = await signedIn(user, ['pwd', 'otp', 'mfa']);
    const withoutPasskey = await authorize(browser, { acr_values: 'phr' });
    expect(new URL(withoutPasskey.location).searchParams.get('error')).toBe('unmet_authentication_requirements');

    await givePasskey(user);
    const withPasskey = new URL((await authorize(browser, { acr_values: 'phr' })).location, t.url);
    expect(withPasskey.pathname).toBe('/sign-in/second-factor');
    expect(withPasskey.searchParams.get('require')).toBe('phr');
  });

  it('takes the weakest known value of several, and ignores values it does not know', async () => {
    const user = await createUser(t);
    const { browser } = await signedIn(user, ['pwd']);
    // aal1 is met by any sign-in: the consent page.
    expect((await authorize(browser, { acr_values: 'urn:example:gold phr aal1' })).status).toBe(200);
    expect((await authorize(browser, { acr_values: 'urn:example:gold' })).status).toBe(200);
    const aal2 = await authorize(browser, { acr_values: 'phr aal2' });
    expect(new URL(aal2.location).searchParams.get('error')).toBe('unmet_authentication_requirements');
  });

  it('answers prompt=none with interaction_required when a second step would meet the request', async () => {
    const user = await createUser(t);
    await giveTotp(user);
    const { browser } = await signedIn(user, ['pwd']);
    const { location } = await authorize(browser, { acr_values: 'aal2', prompt: 'none' });
    expect(new URL(location).searchParams.get('error')).toBe('interaction_required');
  });

  it('signs a visitor in first; the requirement applies when they come back', async () => {
    const { location } = await authorize(new Browser(t.url), { acr_values: 'aal2' });
    const next = new URL(location, t.url);
    expect(next.pathname).toBe('/sign-in');
    expect(new URLSearchParams(next.searchParams.get('return_to')!.split('?')[1]).get('acr_values')).toBe('aal2');
  });
});

describe('max_age', () => {
  it('sends a sign-in older than max_age to sign in again, and counts a later second step as the last sign-in', async () => {
    const user = await createUser(t);
    await giveTotp(user);
    const { browser, sessionId } = await signedIn(user, ['pwd']);
    t.clock.advance(20 * 60_000);
    const { url } = await request({ max_age: '600' });
    const stale = await browser.get(url.pathname + url.search);
    expect(new URL(stale.headers.get('location')!, t.url).pathname).toBe('/sign-in');

    await t.get(SessionsService).stepUp(sessionId, ['pwd', 'otp', 'mfa']);
    const tokens = await idTokenFor(user, browser, { max_age: '600', acr_values: 'aal2' });
    const claims = tokens.claims()!;
    expect(claims.acr).toBe('aal2');
    expect(Math.abs((claims.auth_time as number) - seconds(t.clock.now()))).toBeLessThanOrEqual(1);
  });

  it('treats max_age=0 as prompt=login: a sign-in of this very moment is asked again', async () => {
    const user = await createUser(t);
    const { browser } = await signedIn(user, ['pwd']);
    const { url } = await request({ max_age: '0' });
    const res = await browser.get(url.pathname + url.search);
    expect(res.status).toBe(302);
    const next = new URL(res.headers.get('location')!, t.url);
    expect(next.pathname).toBe('/sign-in');
    // The way back no longer asks, or signing in would never end.
    expect(next.searchParams.get('return_to')).not.toContain('max_age');
  });
});

describe('discovery', () => {
  it('lists the acr values and the amr and acr claims', () => {
    const metadata = config.serverMetadata();
    expect(metadata.acr_values_supported).toEqual(['aal1', 'aal2', 'phr']);
    expect(metadata.claims_supported).toEqual(expect.arrayContaining(['amr', 'acr', 'auth_time', 'email_verified']));
  });
});
