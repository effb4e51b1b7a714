import * as client from 'openid-client';
import { DataSource } from 'typeorm';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service.js';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { DeviceCodeGrant } from '../src/oauth/token/grants/device-code.grant.js';
import { DEVICE_CODE_LIMITS } from '../src/sessions/attempt-throttle.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { discover, discoverPublic, newUserAndApp, registerApp, RegisteredApp, registerPublicApp } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';
import type { User } from '../src/users/user.model.js';

const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

async function post(path: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

/** A confidential client (with its secret, sent as client_secret_post) or a public one (client_id alone). */
interface AnyClient {
  clientId: string;
  clientSecret?: string;
}

const credentials = (app: AnyClient): Record<string, string> =>
  app.clientSecret === undefined ? { client_id: app.clientId } : { client_id: app.clientId, client_secret: app.clientSecret };

/** POST /oauth/device_authorization. */
async function startDevice(app: AnyClient, scope = 'openid profile api'): Promise<DeviceAuthorization> {
  const res = await post('/oauth/device_authorization', { ...credentials(app), scope });
  if (res.status !== 200) throw new Error(`device authorization failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as DeviceAuthorization;
}

/** One poll of the token endpoint with the device code. */
function poll(app: AnyClient, deviceCode: string) {
  return post('/oauth/token', { grant_type: GRANT_TYPE, device_code: deviceCode, ...credentials(app) });
}

async function signedIn(user: User): Promise<Browser> {
  const browser = new Browser(t.url);
  const res = await signIn(browser, user.username, TEST_PASSWORD);
  expect(res.status).toBe(303);
  return browser;
}

/** Follows a link with the code (verification_uri_complete): the form, filled in, nothing looked up yet. */
function followLink(browser: Browser, userCode: string) {
  return browser.get(`/oauth/device?user_code=${encodeURIComponent(userCode)}`);
}

/** Types the code into the form and submits it, as a person would: the consent screen, or why not. */
async function enterCode(browser: Browser, userCode: string) {
  const form = await browser.get('/oauth/device');
  return browser.post('/oauth/device', { ...formFields(await form.text()), user_code: userCode });
}

/** Enters the code and approves (or denies) on the consent screen; returns the page the decision led to. */
async function decide(browser: Browser, userCode: string, decision: 'approve' | 'deny'): Promise<{ status: number; html: string }> {
  const consent = await enterCode(browser, userCode);
  const html = await consent.text();
  if (consent.status !== 200) throw new Error(`expected the consent screen, got ${consent.status}: ${html}`);
  const { posted, page, html: after } = await browser.submit('/oauth/device', { ...formFields(html), decision });
  expect(posted.status).toBe(303);
  expect(posted.headers.get('location')).toBe('/oauth/device');
  return { status: page.status, html: after };
}

describe('the device flow, driven by openid-client', () => {
  it.each(['public', 'confidential'] as const)(
    'a %s client starts, waits while pending, and gets tokens once the user approves on the page',
    async (kind) => {
      const { user, app: confidential } = await newUserAndApp(t);
      const app = kind === 'public' ? await registerPublicApp(t, null) : confidential;
      let polls = 0;
      let approved = false;
      const browser = await signedIn(user);
      const config = kind === 'public' ? await discoverPublic(t, app.clientId) : await discover(t, confidential);
      // The device polls every 5 s of the server's clock: each poll moves the test clock instead of sleeping.
      config[client.customFetch] = async (url, options) => {
        const isPoll = url.endsWith('/oauth/token');
        if (isPoll) {
          polls += 1;
          t.clock.advance(5000);
        }
        const res = await fetch(url, options as RequestInit);
        if (isPoll && !approved) {
          // The first poll is pending: now the user approves on another device.
          expect(res.status).toBe(400);
          expect(((await res.clone().json()) as { error: string }).error).toBe('authorization_pending');
          approved = true;
          expect((await decide(browser, started.user_code, 'approve')).html).toContain('is connected to your account');
        }
        return res;
      };

      const started = await client.initiateDeviceAuthorization(config, { scope: 'openid profile api' });
      expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
      expect(started.device_code).toMatch(/^agora_odc_[0-9A-Za-z]{49}$/);
      expect(started.verification_uri).toBe(`${t.url}/oauth/device`);
      expect(started.verification_uri_complete).toBe(`${t.url}/oauth/device?user_code=${started.user_code}`);
      expect(started.expires_in).toBe(600);
      expect(started.interval).toBe(5);

      // The library waits `interval` seconds of real time before each poll: none here, the clock moves instead.
      const tokens = await client.pollDeviceAuthorizationGrant(config, { ...started, interval: 0 });
      expect(polls).toBe(2);
      expect(tokens.token_type).toBe('bearer');
      expect(tokens.expires_in).toBe(3600);
      expect(tokens.scope).toBe('openid profile api');
      expect(tokens.access_token).toMatch(/^agora_oat_/);
      expect(tokens.claims()).toMatchObject({
        iss: t.url,
        sub: user.id,
        aud: app.clientId,
        name: user.name,
        preferred_username: user.username,
      });
      expect(tokens.claims()!.nonce).toBeUndefined();

      const res = await graphql(t.url, '{ viewer { id name } }', { bearer: tokens.access_token });
      expect(res.status).toBe(200);
      expect(res.body.data?.viewer).toEqual({ id: user.id, name: user.name });
    },
  );

  it('publishes the device authorization endpoint and grant type in discovery', async () => {
    const { app } = await newUserAndApp(t);
    const metadata = (await discover(t, app)).serverMetadata();
    expect(metadata.device_authorization_endpoint).toBe(`${t.url}/oauth/device_authorization`);
    expect(metadata.grant_types_supported).toEqual(['authorization_code', 'refresh_token', GRANT_TYPE, 'client_credentials']);
  });
});

describe('the device authorization endpoint (RFC 8628 §3.1–3.2)', () => {
  it('answers with the codes, never cached, and stores only their hashes', async () => {
    const { app } = await newUserAndApp(t);
    const res = await post('/oauth/device_authorization', { client_id: app.clientId, client_secret: app.clientSecret, scope: 'api' });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual([
      'device_code',
      'expires_in',
      'interval',
      'user_code',
      'verification_uri',
      'verification_uri_complete',
    ]);
    const rows: Record<string, string>[] = await t
      .get(DataSource)
      .query(`SELECT d.* FROM oauth_device_authorizations d JOIN oauth_applications a ON a.id = d.application_id WHERE a.client_id = $1`, [
        app.clientId,
      ]);
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows[0]);
    expect(stored).not.toContain(res.body.device_code);
    expect(stored).not.toContain(res.body.user_code.replace('-', ''));
    expect(rows[0]).toMatchObject({ status: 'pending', scopes: ['api'], interval_seconds: 5 });
  });

  it('accepts HTTP Basic client authentication and a JSON body', async () => {
    const { app } = await newUserAndApp(t);
    const basic = Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64');
    const res = await fetch(`${t.url}/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${basic}` },
      body: JSON.stringify({ scope: 'read_api' }),
    });
    expect(res.status).toBe(200);
  });

  it.each([
    [
      'a wrong secret',
      (app: RegisteredApp) => ({ client_id: app.clientId, client_secret: 'agora_ocs_wrong', scope: 'api' }),
      401,
      'invalid_client',
    ],
    ['an unknown client', () => ({ client_id: 'nobody', client_secret: 'x', scope: 'api' }), 401, 'invalid_client'],
    ['no secret from a confidential client', (app: RegisteredApp) => ({ client_id: app.clientId, scope: 'api' }), 401, 'invalid_client'],
    ['no scope', (app: RegisteredApp) => ({ client_id: app.clientId, client_secret: app.clientSecret }), 400, 'invalid_scope'],
    [
      'an unknown scope',
      (app: RegisteredApp) => ({ client_id: app.clientId, client_secret: app.clientSecret, scope: 'api admin' }),
      400,
      'invalid_scope',
    ],
  ])('refuses %s', async (_, form, status, error) => {
    const { app } = await newUserAndApp(t);
    const res = await post('/oauth/device_authorization', form(app));
    expect(res.status).toBe(status);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({ error, error_description: expect.any(String) });
  });

  it('refuses a scope the application may not request', async () => {
    const owner = await createUser(t);
    const app = await registerApp(t, owner.id, ['openid', 'read_api']);
    const res = await post('/oauth/device_authorization', {
      client_id: app.clientId,
      client_secret: app.clientSecret,
      scope: 'openid api',
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_scope', error_description: 'The application may not request: api' });
  });

  it('answers a body it cannot read in the OAuth shape', async () => {
    const res = await fetch(`${t.url}/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(((await res.json()) as { error: string }).error).toBe('invalid_request');
  });
});

describe('public clients (token_endpoint_auth_method none)', () => {
  it('start and poll with their client_id alone', async () => {
    const { user } = await newUserAndApp(t);
    const app = await registerPublicApp(t, null, { scopes: ['openid', 'api'] });
    const { device_code, user_code } = await startDevice(app, 'api');
    expect((await poll(app, device_code)).body.error).toBe('authorization_pending');
    await decide(await signedIn(user), user_code, 'approve');
    const res = await poll(app, device_code);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'api' });
  });

  it('are refused when they send a secret', async () => {
    const app = await registerPublicApp(t, null);
    const res = await post('/oauth/device_authorization', { client_id: app.clientId, client_secret: 'agora_ocs_anything', scope: 'api' });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });

  it('cannot redeem another public client’s device code', async () => {
    const { user } = await newUserAndApp(t);
    const app = await registerPublicApp(t, null);
    const other = await registerPublicApp(t, null);
    const { device_code, user_code } = await startDevice(app, 'api');
    await decide(await signedIn(user), user_code, 'approve');
    expect((await poll(other, device_code)).body).toEqual({ error: 'invalid_grant', error_description: 'The device code is unknown' });
    expect((await poll(app, device_code)).status).toBe(200);
  });

  it('cannot pass for a confidential client by its client_id alone', async () => {
    const { app } = await newUserAndApp(t);
    const res = await post('/oauth/device_authorization', { client_id: app.clientId, scope: 'api' });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });
});

describe('polling the token endpoint (RFC 8628 §3.4–3.5)', () => {
  it('answers authorization_pending, then slow_down to a client that polls too soon, growing the interval by 5 s', async () => {
    const { app } = await newUserAndApp(t);
    const { device_code } = await startDevice(app);
    const first = await poll(app, device_code);
    expect(first.status).toBe(400);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.body).toEqual({ error: 'authorization_pending', error_description: expect.any(String) });

    t.clock.advance(4000);
    expect((await poll(app, device_code)).body.error).toBe('slow_down');
    // Now 10 s apart: 5 s is too soon again, and that makes it 15.
    t.clock.advance(5000);
    expect((await poll(app, device_code)).body.error).toBe('slow_down');
    t.clock.advance(15_000);
    expect((await poll(app, device_code)).body.error).toBe('authorization_pending');
  });

  it('answers expired_token once the code has expired, and the page refuses the code', async () => {
    const { user, app } = await newUserAndApp(t);
    const { device_code, user_code } = await startDevice(app);
    t.clock.advance(600_000);
    const res = await poll(app, device_code);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('expired_token');

    const page = await enterCode(await signedIn(user), user_code);
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('This code has expired. Start again on your device');
  });

  it('answers access_denied after the user denies', async () => {
    const { user, app } = await newUserAndApp(t);
    const { device_code, user_code } = await startDevice(app);
    const denied = await decide(await signedIn(user), user_code, 'deny');
    expect(denied.status).toBe(200);
    expect(denied.html).toContain('Denied: Test Client was not given access.');
    const res = await poll(app, device_code);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('access_denied');
  });

  it('issues the token once: the device code presented again is invalid_grant, and revokes the token it issued', async () => {
    const { user, app } = await newUserAndApp(t);
    const { device_code, user_code } = await startDevice(app, 'api');
    await decide(await signedIn(user), user_code, 'approve');
    const first = await poll(app, device_code);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(first.body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(first.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'api' });

    t.clock.advance(5000);
    const second = await poll(app, device_code);
    expect(second.status).toBe(400);
    expect(second.body).toEqual({
      error: 'invalid_grant',
      error_description: 'The device code was already used; the tokens issued from it are revoked',
    });
    // As for a replayed authorization code: the code is in other hands, so what it gave is withdrawn.
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: first.body.access_token })).status).toBe(401);
  });

  it('of 10 concurrent polls of an approved code, exactly one gets a token', async () => {
    const { user, app } = await newUserAndApp(t);
    const { device_code, user_code } = await startDevice(app, 'api');
    await decide(await signedIn(user), user_code, 'approve');
    const results = await Promise.all(Array.from({ length: 10 }, () => poll(app, device_code)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400).map((r) => r.body.error)).toEqual(Array(9).fill('invalid_grant'));
  });

  it('of 10 concurrent redemptions at the service, exactly one gets a token (the row lock decides)', async () => {
    const { user, app } = await newUserAndApp(t);
    const { device_code, user_code } = await startDevice(app, 'api');
    await decide(await signedIn(user), user_code, 'approve');
    const application = (await t.get(ApplicationsService).findByClientId(app.clientId))!;
    const grant = t.get(DeviceCodeGrant);
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => grant.exchange(application, { device_code }, [])));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const tokens: { n: string }[] = await t
      .get(DataSource)
      .query(`SELECT count(*) AS n FROM oauth_access_tokens WHERE application_id = $1`, [application.id]);
    expect(Number(tokens[0]!.n)).toBe(1);
  });

  it('answers another client’s device code as an unknown one, and leaves it to its own client', async () => {
    const { user, app } = await newUserAndApp(t);
    const other = await registerApp(t, (await createUser(t)).id);
    const { device_code, user_code } = await startDevice(app, 'api');
    await decide(await signedIn(user), user_code, 'approve');
    const stolen = await poll(other, device_code);
    expect(stolen.status).toBe(400);
    expect(stolen.body).toEqual({ error: 'invalid_grant', error_description: 'The device code is unknown' });
    expect((await poll(app, device_code)).status).toBe(200);
  });

  it('refuses a missing, malformed or unknown device code', async () => {
    const { app } = await newUserAndApp(t);
    const missing = await post('/oauth/token', { grant_type: GRANT_TYPE, client_id: app.clientId, client_secret: app.clientSecret });
    expect(missing.body).toEqual({ error: 'invalid_request', error_description: 'device_code is required' });
    expect((await poll(app, 'not-a-device-code')).body.error).toBe('invalid_grant');
    const { device_code } = await startDevice(app);
    const unknown = device_code.slice(0, -8) + 'AAAAAAAA';
    expect((await poll(app, unknown)).body.error).toBe('invalid_grant');
  });

  it('requires client authentication', async () => {
    const { app } = await newUserAndApp(t);
    const { device_code } = await startDevice(app);
    const res = await post('/oauth/token', { grant_type: GRANT_TYPE, device_code, client_id: app.clientId });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });
});

describe('the /oauth/device page', () => {
  it('sends a visitor to sign in and back to the code', async () => {
    const { user, app } = await newUserAndApp(t);
    const { verification_uri_complete } = await startDevice(app);
    const browser = new Browser(t.url);
    const path = new URL(verification_uri_complete).pathname + new URL(verification_uri_complete).search;
    const first = await browser.get(path);
    expect(first.status).toBe(303);
    const location = new URL(first.headers.get('location')!, t.url);
    expect(location.pathname).toBe('/sign-in');
    expect(location.searchParams.get('return_to')).toBe(path);

    const back = await signIn(browser, user.username, TEST_PASSWORD, location.searchParams.get('return_to')!);
    expect(back.headers.get('location')).toBe(path);
    const filled = await browser.get(back.headers.get('location')!);
    expect(filled.status).toBe(200);
    const form = await filled.text();
    // RFC 8628 §3.3.1: the code from the link is shown for the user to confirm, not acted on.
    expect(form).toContain('A link filled in this code. Continue only if it is the code your device shows right now.');
    expect(formFields(form).user_code).toBe(new URL(verification_uri_complete).searchParams.get('user_code'));
    const consent = await browser.post('/oauth/device', formFields(form));
    expect(consent.status).toBe(200);
    const html = await consent.text();
    expect(html).toContain('Connect <span class="app-name">Test Client</span>');
    expect(html).toContain('Approve only if you started this yourself, on your own device');
    expect(html).toContain('Read and write all of your data through the API');
    expect(html).toContain('<code>openid</code>');
    expect(consent.headers.get('content-security-policy')).toContain("form-action 'self'");
  });

  it('shows the application as its owner describes it (logo, owner, description, homepage), as the consent page does', async () => {
    const owner = await createUser(t, { name: 'Dev Eloper' });
    const user = await createUser(t);
    const { application, clientSecret } = await t.get(ApplicationsService).create(owner.id, {
      name: 'TV app',
      redirectUris: ['http://localhost:4000/callback'],
      scopes: ['openid', 'api'],
      description: 'Shows <your> events on the big screen',
      clientUri: 'https://tv.example.com/',
      logoUri: 'https://cdn.example.net/tv/logo.png',
    });
    const { user_code } = await startDevice({ clientId: application.clientId, clientSecret }, 'openid api');
    const browser = new Browser(t.url);
    await signIn(browser, user.username, TEST_PASSWORD);
    const consent = await browser.post('/oauth/device', formFields(await (await followLink(browser, user_code)).text()));
    expect(consent.status).toBe(200);
    const html = await consent.text();
    expect(html).toContain('Connect <span class="app-name">TV app</span>');
    expect(html).toContain('class="app-logo" src="https://cdn.example.net/tv/logo.png" width="48" height="48"');
    expect(html).toContain('<p class="app-owner">by Dev Eloper (@' + owner.username + ')</p>');
    expect(html).toContain('<p class="app-description">Shows &lt;your&gt; events on the big screen</p>');
    expect(html).toContain('<a href="https://tv.example.com/" target="_blank" rel="noopener noreferrer">https://tv.example.com/</a>');
    expect(consent.headers.get('content-security-policy')).toMatch(/(^|;\s*)img-src 'self' data: https:\/\/cdn\.example\.net(;|$)/);
  });

  it('shows a form to enter the code, and finds the code whatever its case and dashes', async () => {
    const { user, app } = await newUserAndApp(t);
    const browser = await signedIn(user);
    const form = await browser.get('/oauth/device');
    expect(form.status).toBe(200);
    expect(await form.text()).toContain('<form method="post" action="/oauth/device"');

    const { user_code, device_code } = await startDevice(app, 'api');
    const typed = user_code.replace('-', '').toLowerCase();
    const consent = await enterCode(browser, ` ${typed} `);
    expect(consent.status).toBe(200);
    await browser.submit('/oauth/device', { ...formFields(await consent.text()), decision: 'approve' });
    expect((await poll(app, device_code)).status).toBe(200);
  });

  it('explains a wrong code, and a code that is not one', async () => {
    const { user } = await newUserAndApp(t);
    const browser = await signedIn(user);
    const wrong = await enterCode(browser, 'BBBB-BBBB');
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('No device is waiting for this code');
    const malformed = await enterCode(browser, 'hello');
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).toContain('codes are 8 letters, like BCDF-GHJK');
    const malformedLink = await followLink(browser, 'hello');
    expect(malformedLink.status).toBe(400);
    expect(await malformedLink.text()).toContain('codes are 8 letters, like BCDF-GHJK');
  });

  it('approves a code once: the second approval is refused, and a denied code cannot be approved', async () => {
    const { user, app } = await newUserAndApp(t);
    const browser = await signedIn(user);
    const { user_code } = await startDevice(app);
    const consent = await enterCode(browser, user_code);
    const fields = formFields(await consent.text());
    expect((await browser.post('/oauth/device', { ...fields, decision: 'approve' })).status).toBe(303);
    const again = await browser.post('/oauth/device', { ...fields, decision: 'approve' });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('This code has already been used');
    const reopened = await enterCode(browser, user_code);
    expect(reopened.status).toBe(400);

    const denied = await startDevice(app);
    await decide(browser, denied.user_code, 'deny');
    const afterDeny = await browser.post('/oauth/device', { ...fields, user_code: denied.user_code, decision: 'approve' });
    expect(afterDeny.status).toBe(400);
  });

  it('refuses a decision without the CSRF token', async () => {
    const { user, app } = await newUserAndApp(t);
    const browser = await signedIn(user);
    const { user_code, device_code } = await startDevice(app);
    const res = await browser.post('/oauth/device', { user_code, decision: 'approve' });
    expect(res.status).toBe(403);
    expect((await poll(app, device_code)).body.error).toBe('authorization_pending');
  });

  it(`does not count codes in links: ${DEVICE_CODE_LIMITS.user} cross-site GETs with wrong codes leave the user free to enter theirs`, async () => {
    const { user, app } = await newUserAndApp(t);
    const browser = await signedIn(user);
    const { user_code } = await startDevice(app);
    // Any page can send a signed-in browser to these links: a top-level navigation carries the SameSite=Lax
    // session cookie, so to the server each is exactly this GET.
    for (let i = 0; i < DEVICE_CODE_LIMITS.user + 2; i++) {
      const link = await followLink(browser, `BBBB-BB${'BCDFGHJKLMNP'[i]}B`);
      expect(link.status).not.toBe(429);
    }
    const own = await followLink(browser, user_code);
    expect(await own.text()).not.toContain('Too many wrong codes');
    expect(own.status).toBe(200);
    const consent = await browser.post('/oauth/device', formFields(await (await followLink(browser, user_code)).text()));
    expect(consent.status).toBe(200);
    expect(await consent.text()).toContain('Approve only if you started this yourself');
  });

  it('does not count a cross-site form post: without the CSRF token it is refused before any lookup', async () => {
    const { user, app } = await newUserAndApp(t);
    const browser = await signedIn(user);
    const { user_code } = await startDevice(app);
    for (let i = 0; i < DEVICE_CODE_LIMITS.user; i++) {
      const forged = await browser.post(
        '/oauth/device',
        { user_code: `BBBB-BB${'BCDFGHJKLM'[i]}B` },
        { origin: 'https://attacker.example' },
      );
      expect(forged.status).toBe(403);
    }
    expect((await enterCode(browser, user_code)).status).toBe(200);
  });

  it(`throttles code guessing: after ${DEVICE_CODE_LIMITS.user} wrong codes a user waits, even with a right code`, async () => {
    const { user, app } = await newUserAndApp(t);
    const browser = await signedIn(user);
    const { user_code } = await startDevice(app);
    // A right code is not counted against the user.
    expect((await enterCode(browser, user_code)).status).toBe(200);
    for (let i = 0; i < DEVICE_CODE_LIMITS.user; i++) {
      const wrong = await enterCode(browser, `BBBB-BB${'BCDFGHJKLM'[i]}B`);
      expect(wrong.status).toBe(400);
    }
    const throttled = await enterCode(browser, user_code);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    const throttledHtml = await throttled.text();
    expect(throttledHtml).toContain('Too many wrong codes. Try again in 15 minutes.');
    const posted = await browser.post('/oauth/device', { ...formFields(throttledHtml), user_code, decision: 'approve' });
    expect(posted.status).toBe(429);

    // Another user at the same address is not held back by this one's guesses.
    const other = await signedIn(await createUser(t));
    expect((await enterCode(other, user_code)).status).toBe(200);

    // The window passes.
    t.clock.advance(15 * 60_000 + 1000);
    expect((await enterCode(browser, user_code)).status).toBe(400); // expired by now (10 minutes)
  });
});

describe('housekeeping', () => {
  it('purges device authorizations a day past their expiry', async () => {
    const { app } = await newUserAndApp(t);
    await startDevice(app);
    const count = async () => Number((await t.get(DataSource).query(`SELECT count(*) AS n FROM oauth_device_authorizations`))[0].n);
    const before = await count();
    expect(before).toBeGreaterThan(0);
    t.clock.advance(600_000 + 24 * 3_600_000 + 1000);
    const purged = await t.get(HousekeepingService).run();
    expect(purged?.deviceCodes).toBe(before);
    expect(await count()).toBe(0);
  });
});

describe('an approval on the device page', () => {
  it('is listed under Authorized applications, and revoking it there ends what the device holds', async () => {
    const user = await createUser(t);
    const app = await registerPublicApp(t, null, { scopes: ['openid', 'api', 'offline_access'] });
    const device = await startDevice(app, 'openid api offline_access');
    const browser = await signedIn(user);
    await decide(browser, device.user_code, 'approve');
    t.clock.advance(5000);
    const tokens = await poll(app, device.device_code);
    expect(tokens.status).toBe(200);
    expect(tokens.body.refresh_token).toMatch(/^agora_ort_/);

    const href = `/account/authorized/${app.applicationId}/revoke`;
    expect(await (await browser.get('/account/authorized')).text()).toContain(href);
    const confirm = await (await browser.get(href)).text();
    const { posted } = await browser.submit(href, formFields(confirm));
    expect(posted.status).toBe(303);

    const refreshed = await post('/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      client_id: app.clientId,
    });
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe('invalid_grant');
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: tokens.body.access_token })).status).toBe(401);
  });
});
