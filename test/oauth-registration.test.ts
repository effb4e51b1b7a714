import * as client from 'openid-client';
import { DataSource } from 'typeorm';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service.js';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { approveInBrowser } from './support/oauth.js';
import { runCli } from './support/processes.js';
import { startTestApp, TestApp } from './support/test-app.js';
import type { User } from '../src/users/user.model.js';

let t: TestApp;
beforeAll(async () => {
  // Every registration here comes from 127.0.0.1: one network, given the whole cap.
  t = await startTestApp({ OAUTH_DYNAMIC_REGISTRATION: 'true', OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK: '1000' });
});
afterAll(() => t.close());

const CALLBACK = 'http://localhost:4000/callback';

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, any>;
}

async function register(body: unknown, contentType = 'application/json', app: TestApp = t): Promise<Answer> {
  const res = await fetch(`${app.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as Record<string, any> };
}

function expectRefused(res: Answer, error: 'invalid_redirect_uri' | 'invalid_client_metadata'): void {
  expect(res.status).toBe(400);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.body).toEqual({ error, error_description: expect.any(String) });
}

describe('dynamic client registration (RFC 7591), on', () => {
  it('is announced by both discovery documents', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const metadata = (await (await fetch(`${t.url}${path}`)).json()) as Record<string, unknown>;
      expect(metadata.registration_endpoint).toBe(`${t.url}/oauth/register`);
    }
  });

  it('registers a public client (none): no secret, owned by nobody, metadata echoed', async () => {
    const res = await register({
      client_name: 'My CLI',
      redirect_uris: ['http://127.0.0.1/callback', 'com.example.cli:/oauth'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      scope: 'openid read_api',
      // The profile is kept and echoed.
      logo_uri: 'https://cli.example/logo.png',
      client_uri: 'https://cli.example/',
      client_description: 'Syncs your <events> to a calendar',
      // Unknown and unsupported metadata is ignored (RFC 7591 §2), and not echoed.
      software_id: 'cli',
      jwks: { keys: [] },
      something_else: [1, 2, 3],
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      client_id: expect.stringMatching(/^[0-9a-f]{40}$/),
      client_id_issued_at: expect.any(Number),
      registration_access_token: expect.stringMatching(/^agora_rat_/),
      registration_client_uri: `${t.url}/oauth/register/${res.body.client_id}`,
      client_name: 'My CLI',
      redirect_uris: ['http://127.0.0.1/callback', 'com.example.cli:/oauth'],
      post_logout_redirect_uris: [],
      logo_uri: 'https://cli.example/logo.png',
      client_uri: 'https://cli.example/',
      client_description: 'Syncs your <events> to a calendar',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: 'openid read_api',
      id_token_signed_response_alg: 'RS256',
      access_token_format: 'opaque',
      subject_type: 'public',
    });
    expect(Math.abs(res.body.client_id_issued_at - Date.now() / 1000)).toBeLessThan(60);
    const application = (await t.get(ApplicationsService).findByClientId(res.body.client_id))!;
    expect(application).toMatchObject({ ownerId: null, clientType: 'public', clientSecretHash: null, scopes: ['openid', 'read_api'] });
  });

  it('registers a confidential client by default (client_secret_basic), its secret shown this once', async () => {
    const res = await register({ redirect_uris: ['https://app.example/cb'] });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      client_id: expect.any(String),
      client_secret: expect.stringMatching(/^agora_ocs_/),
      client_secret_expires_at: 0,
      client_id_issued_at: expect.any(Number),
      registration_access_token: expect.stringMatching(/^agora_rat_/),
      registration_client_uri: `${t.url}/oauth/register/${res.body.client_id}`,
      client_name: 'Unnamed application',
      redirect_uris: ['https://app.example/cb'],
      post_logout_redirect_uris: [],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'openid api',
      id_token_signed_response_alg: 'RS256',
      access_token_format: 'opaque',
      subject_type: 'public',
    });
    const applications = t.get(ApplicationsService);
    expect(await applications.authenticate(res.body.client_id, res.body.client_secret)).toMatchObject({ ownerId: null });
  });

  it('signs a user in with a confidential client openid-client registered itself', async () => {
    const user = await createUser(t);
    const config = await client.dynamicClientRegistration(
      new URL(t.url),
      {
        client_name: 'Registered web app',
        redirect_uris: [CALLBACK],
        token_endpoint_auth_method: 'client_secret_post',
        scope: 'openid profile api',
      },
      undefined,
      { execute: [client.allowInsecureRequests] },
    );
    expect(config.clientMetadata().client_secret).toMatch(/^agora_ocs_/);
    const tokens = await signInWith(config, user, 'openid profile api');
    expect(tokens.claims()).toMatchObject({ sub: user.id, aud: config.clientMetadata().client_id, preferred_username: user.username });
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: tokens.access_token })).body.data?.viewer).toEqual({ id: user.id });
  });

  it('signs a user in with a public client openid-client registered itself (PKCE alone)', async () => {
    const user = await createUser(t);
    const config = await client.dynamicClientRegistration(
      new URL(t.url),
      {
        client_name: 'Registered native app',
        redirect_uris: ['http://127.0.0.1/callback'],
        token_endpoint_auth_method: 'none',
        scope: 'api',
      },
      client.None(),
      { execute: [client.allowInsecureRequests] },
    );
    expect(config.clientMetadata().client_secret).toBeUndefined();
    const port = 49152 + Math.floor(Math.random() * 16000);
    const tokens = await signInWith(config, user, 'api', `http://127.0.0.1:${port}/callback`);
    expect(tokens.scope).toBe('api');
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: tokens.access_token })).body.data?.viewer).toEqual({ id: user.id });
  });

  async function signInWith(config: client.Configuration, user: User, scope: string, redirectUri = CALLBACK) {
    const application = (await t.get(ApplicationsService).findByClientId(config.clientMetadata().client_id))!;
    expect(application.ownerId).toBeNull();
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const openid = scope.split(' ').includes('openid');
    const nonce = openid ? client.randomNonce() : undefined;
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      ...(nonce && { nonce }),
    });
    const callback = new URL(await approveInBrowser(t, url, user));
    return client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: codeVerifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: openid,
    });
  }
});

describe('registration refuses bad metadata with a 400 in RFC 7591 words, never a 500', () => {
  const valid = { redirect_uris: ['https://app.example/cb'] };

  it.each([
    ['no redirect_uris', {}],
    ['an empty redirect_uris', { redirect_uris: [] }],
    ['redirect_uris as a string', { redirect_uris: 'https://app.example/cb' }],
    ['redirect_uris of numbers', { redirect_uris: [1, 2] }],
    ['a relative redirect URI', { redirect_uris: ['/callback'] }],
    ['http on a host that is not this machine', { redirect_uris: ['http://app.example/cb'] }],
    ['a fragment', { redirect_uris: ['https://app.example/cb#here'] }],
    ['credentials in the URI', { redirect_uris: ['https://user:pw@app.example/cb'] }],
    ['a private-use scheme for a confidential client', { redirect_uris: ['com.example.app:/cb'] }],
    ['javascript:', { redirect_uris: ['javascript:alert(1)'], token_endpoint_auth_method: 'none' }],
    ['eleven redirect URIs', { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example/cb${i}`) }],
  ])('%s: invalid_redirect_uri', async (_name, body) => {
    expectRefused(await register(body), 'invalid_redirect_uri');
  });

  it.each([
    ['client_credentials (service accounts only)', { ...valid, grant_types: ['authorization_code', 'client_credentials'] }],
    ['an unknown grant type', { ...valid, grant_types: ['authorization_code', 'urn:example:grant'] }],
    ['the password grant', { ...valid, grant_types: ['authorization_code', 'password'] }],
    ['grant_types as a string', { ...valid, grant_types: 'authorization_code' }],
    ['response_type token', { ...valid, response_types: ['token'] }],
    ['response types of numbers', { ...valid, response_types: [1] }],
    ['a code response without the code grant', { ...valid, grant_types: [], response_types: ['code'] }],
    ['an unsupported authentication method', { ...valid, token_endpoint_auth_method: 'client_secret_jwt' }],
    ['an authentication method that is no string', { ...valid, token_endpoint_auth_method: ['none'] }],
    ['an inherited property name as method', { ...valid, token_endpoint_auth_method: 'toString' }],
    ['an unknown scope', { ...valid, scope: 'openid admin' }],
    ['an empty scope', { ...valid, scope: '' }],
    ['scope as an array', { ...valid, scope: ['api'] }],
    ['a name too long', { ...valid, client_name: 'x'.repeat(101) }],
    ['a name that is a number', { ...valid, client_name: 5 }],
    ['post-logout URIs of the wrong type', { ...valid, post_logout_redirect_uris: [null] }],
    ['a bad post-logout URI', { ...valid, post_logout_redirect_uris: ['http://app.example/bye'] }],
    ['a JSON array', [valid]],
    ['JSON null', null],
    ['a JSON string', 'x'],
  ])('%s: invalid_client_metadata', async (_name, body) => {
    expectRefused(await register(body === 'x' ? '"x"' : body), 'invalid_client_metadata');
  });

  it.each([
    ['a logo over http', { logo_uri: 'http://app.example/logo.png' }, 'logo_uri: Logo URL must use https'],
    ['a data: logo', { logo_uri: 'data:image/svg+xml,<svg/>' }, 'logo_uri: Logo URL must use https'],
    ['a logo with credentials', { logo_uri: 'https://u:p@app.example/logo.png' }, 'logo_uri: Logo URL must not contain credentials'],
    ['a javascript: homepage', { client_uri: 'javascript:alert(1)' }, 'client_uri: Homepage URL must use https (http only for localhost)'],
    ['a relative homepage', { client_uri: '/home' }, 'client_uri: Homepage URL must be an absolute address starting with https://'],
    [
      'a homepage too long',
      { client_uri: `https://app.example/${'x'.repeat(490)}` },
      'client_uri: Homepage URL must be at most 500 characters',
    ],
    ['a description too long', { client_description: 'x'.repeat(501) }, 'client_description: Description must be at most 500 characters'],
    ['a logo_uri that is no string', { logo_uri: 5 }, 'logo_uri must be a string'],
  ])('%s: invalid_client_metadata naming the member', async (_name, profile, description) => {
    const res = await register({ ...valid, ...profile });
    expectRefused(res, 'invalid_client_metadata');
    expect(res.body.error_description).toBe(description);
  });

  it('names the index of each bad redirect URI in the array', async () => {
    const res = await register({ redirect_uris: ['https://app.example/cb', 'http://app.example/cb', 'https://app.example/cb#x'] });
    expectRefused(res, 'invalid_redirect_uri');
    expect(res.body.error_description).toBe(
      'redirect_uris[1]: Redirect URIs must use https (http is allowed only for localhost); redirect_uris[2]: Redirect URIs must not contain a fragment (#)',
    );
  });

  it('refuses a body that is not JSON, or not sent as JSON', async () => {
    expectRefused(await register('{"redirect_uris": [', 'application/json'), 'invalid_client_metadata');
    expectRefused(await register('', 'application/json'), 'invalid_client_metadata');
    expectRefused(
      await register(new URLSearchParams({ redirect_uris: 'https://app.example/cb' }).toString(), 'application/x-www-form-urlencoded'),
      'invalid_client_metadata',
    );
    expectRefused(await register(JSON.stringify(valid), 'text/plain'), 'invalid_client_metadata');
  });

  it('refuses a huge body and text that cannot be stored', async () => {
    expectRefused(await register({ ...valid, client_name: 'x'.repeat(2 * 1024 * 1024) }), 'invalid_client_metadata');
    expectRefused(await register({ ...valid, client_name: 'x'.repeat(200_000) }), 'invalid_client_metadata');
    expectRefused(await register({ ...valid, client_name: 'nul \u0000 byte' }), 'invalid_client_metadata');
  });
});

describe('claiming a registered application', () => {
  it('lists it for operators with owner null until an operator gives it to a user, whose dashboard then shows it', async () => {
    const registered = await register({ client_name: 'Claim me', redirect_uris: ['https://claim.example/cb'] });
    const clientId = registered.body.client_id as string;
    const before = await runCli(t.databaseEnv, 'apps:list');
    expect(before.code).toBe(0);
    expect(before.json.applications.find((a: { clientId: string }) => a.clientId === clientId)).toMatchObject({
      name: 'Claim me',
      owner: null,
    });

    const user = await createUser(t);
    const browser = new Browser(t.url);
    await signIn(browser, user.username, TEST_PASSWORD);
    expect(await (await browser.get('/applications')).text()).not.toContain(clientId);

    const claimed = await runCli(t.databaseEnv, 'apps:claim', '--id', clientId, '--user', user.username);
    expect(claimed.stderr).toBe('');
    expect(claimed.json).toMatchObject({ clientId, name: 'Claim me', owner: user.username });
    expect(await (await browser.get('/applications')).text()).toContain(clientId);
    const after = await runCli(t.databaseEnv, 'apps:list', '--user', user.username);
    expect(after.json.applications).toEqual([expect.objectContaining({ clientId, owner: user.username })]);

    // Claimed once: it stays with its owner.
    const other = await createUser(t);
    const again = await runCli(t.databaseEnv, 'apps:claim', '--id', clientId, '--user', other.username);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('agora: --id: This application already has an owner\n');
  });
});

describe('registration throttle', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({ OAUTH_DYNAMIC_REGISTRATION: 'true', RATE_LIMIT_OAUTH_REGISTRATIONS: '3' });
  });
  afterAll(() => limited.close());

  it('answers 429 too_many_requests with Retry-After once a network has spent its registrations', async () => {
    expect((await register({ redirect_uris: ['https://a.example/cb'] }, 'application/json', limited)).status).toBe(201);
    // A refused registration counts too.
    expect((await register({ redirect_uris: ['http://a.example/cb'] }, 'application/json', limited)).status).toBe(400);
    const third = await register({ redirect_uris: ['https://a.example/cb'] }, 'application/json', limited);
    expect(third.status).toBe(201);
    expect(third.headers.get('x-ratelimit-remaining')).toBe('0');
    const refused = await register({ redirect_uris: ['https://a.example/cb'] }, 'application/json', limited);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.body).toEqual({
      error: 'too_many_requests',
      error_description: expect.stringMatching(/registrations from your network/),
    });
    // Other endpoints are not affected.
    expect((await fetch(`${limited.url}/.well-known/oauth-authorization-server`)).status).toBe(200);
  });
});

describe('registration that no single network can close for everyone', () => {
  let open: TestApp;
  beforeAll(async () => {
    open = await startTestApp({
      OAUTH_DYNAMIC_REGISTRATION: 'true',
      TRUST_PROXY: 'true',
      OAUTH_UNCLAIMED_APPLICATIONS_MAX: '12',
      OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK: '4',
      RATE_LIMIT_OAUTH_REGISTRATIONS: '100',
    });
  });
  afterAll(() => open.close());

  const from = (address: string, name = `From ${address}`) =>
    fetch(`${open.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
      body: JSON.stringify({ client_name: name, redirect_uris: ['https://many.example/cb'] }),
    });
  const unclaimed = async () =>
    Number((await open.get(DataSource).query(`SELECT count(*) AS n FROM oauth_applications WHERE owner_id IS NULL`))[0].n);

  it('counts 52 loopback addresses as one network: they get its share of the cap, and the rest of the world still registers', async () => {
    const statuses = [];
    for (let i = 1; i <= 52; i++) statuses.push((await from(`127.0.0.${i}`)).status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(4);
    expect(statuses.slice(4).every((status) => status === 429)).toBe(true);
    expect(await unclaimed()).toBe(4);

    const quota = await from('127.0.0.99');
    expect(quota.status).toBe(429);
    expect(quota.headers.get('cache-control')).toBe('no-store');
    // Until the network's oldest unused registration expires (OAUTH_UNCLAIMED_APPLICATION_TTL_SECONDS, a day).
    expect(Number(quota.headers.get('retry-after'))).toBeGreaterThan(86_400 - 60);
    expect(Number(quota.headers.get('retry-after'))).toBeLessThanOrEqual(86_400);
    expect(await quota.json()).toEqual({
      error: 'too_many_requests',
      error_description: expect.stringMatching(/registered from your network wait to be claimed/),
    });

    // Another /24, and an IPv6 /48, register as if nothing happened.
    expect((await from('198.51.100.7')).status).toBe(201);
    expect((await from('2001:db8:77:1::1')).status).toBe(201);
    // Another /64 in the same /48 is the same network.
    for (let i = 2; i <= 4; i++) expect((await from(`2001:db8:77:${i}::1`)).status).toBe(201);
    expect((await from('2001:db8:77:5::1')).status).toBe(429);
  });

  it('answers 503 temporarily_unavailable with Retry-After when the oldest unused registration expires, once the networks together fill the cap', async () => {
    // 4 (127.0.0.0/24) + 1 (198.51.100.0/24) + 4 (2001:db8:77::/48) so far; three more fill the 12.
    for (const address of ['198.51.100.8', '198.51.100.9', '203.0.113.1']) expect((await from(address)).status).toBe(201);
    expect(await unclaimed()).toBe(12);
    open.clock.advance(3_600_000); // an hour later: the oldest unused one is due in 23 hours (OAUTH_UNCLAIMED_APPLICATION_TTL_SECONDS = a day)
    const closed = await from('192.0.2.1');
    expect(closed.status).toBe(503);
    expect(closed.headers.get('cache-control')).toBe('no-store');
    const retryAfter = Number(closed.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(23 * 3600 - 60);
    expect(retryAfter).toBeLessThanOrEqual(23 * 3600);
    expect(await closed.json()).toEqual({
      error: 'temporarily_unavailable',
      error_description: expect.stringMatching(/too many applications/),
    });
  });

  it('never tells a refused client to retry sooner than housekeeping can have run, once the oldest unused registration is overdue', async () => {
    // A day and an hour after the first registrations: every unused one is due for deletion, but
    // housekeeping has not run yet (it looks every HOUSEKEEPING_INTERVAL_SECONDS / 4, 900 s by default).
    open.clock.advance(24 * 3_600_000);
    const closed = await from('192.0.2.1');
    expect(closed.status).toBe(503);
    expect(closed.headers.get('retry-after')).toBe('900');
    const quota = await from('127.0.0.99');
    expect(quota.status).toBe(429);
    expect(quota.headers.get('retry-after')).toBe('900');
  });

  it('never overshoots the caps under concurrent registrations', async () => {
    await open.get(DataSource).query(`DELETE FROM oauth_applications WHERE owner_id IS NULL`);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => from(`192.0.2.${i + 1}`).then((res) => res.status)));
    expect(results.filter((status) => status === 201)).toHaveLength(4);
    expect(await unclaimed()).toBe(4);
  });

  it('counts the applications users consented to against their network’s quota: consenting and housekeeping free none of it', async () => {
    // The four that 192.0.2.0/24 registered above, each authorized by a user, long past the TTL.
    const user = await createUser(open);
    const db = open.get(DataSource);
    const ids = (await db.query(`SELECT id FROM oauth_applications WHERE owner_id IS NULL AND registered_from = '192.0.2.0/24'`)) as {
      id: string;
    }[];
    expect(ids).toHaveLength(4);
    for (const { id } of ids)
      await db.query(`INSERT INTO oauth_grants (user_id, application_id, scopes) VALUES ($1, $2, '{api}')`, [user.id, id]);
    open.clock.advance(2 * 86_400_000);
    expect((await open.get(HousekeepingService).run())!.unclaimedApplications).toBe(0);

    const refused = await from('192.0.2.77');
    expect(refused.status).toBe(429);
    // All of them in use: only an operator makes room, so try again in a whole TTL.
    expect(refused.headers.get('retry-after')).toBe('86400');
    expect(await unclaimed()).toBe(4);
  });
});

describe('a self-registered application is never sent a browser without the user seeing where', () => {
  const REDIRECT = 'https://self.example/cb';
  const AFTER_LOGOUT = 'https://self.example/bye';
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

  async function selfRegistered(): Promise<string> {
    const res = await register({
      client_name: 'Totally Agora Support',
      redirect_uris: [REDIRECT],
      post_logout_redirect_uris: [AFTER_LOGOUT],
      token_endpoint_auth_method: 'none',
      scope: 'openid profile',
    });
    expect(res.status).toBe(201);
    return res.body.client_id as string;
  }

  async function claim(clientId: string): Promise<void> {
    const owner = await createUser(t);
    expect((await runCli(t.databaseEnv, 'apps:claim', '--id', clientId, '--user', owner.username)).code).toBe(0);
  }

  /** The href of the page's "Return to …" link, unescaped. */
  function returnLink(html: string): string {
    const href = /<a class="button" href="([^"]+)" rel="noreferrer">Return to ([^<]+)<\/a>/.exec(html);
    expect(href).not.toBeNull();
    expect(href![2]).toBe('self.example');
    // The link's query is escaped in the attribute: a raw & there would be broken HTML.
    expect(href![1]).not.toMatch(/&(?!amp;)/);
    return href![1]!.replaceAll('&amp;', '&');
  }

  const authorize = (clientId: string, extra: Record<string, string>) =>
    `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, scope: 'openid', state: 's1', ...extra })}`;

  it('answers an invalid authorization request with a page and a link, not a redirect, until the application is claimed', async () => {
    const clientId = await selfRegistered();
    const path = authorize(clientId, {}); // no code_challenge: PKCE is required
    const page = await fetch(`${t.url}${path}`, { redirect: 'manual' });
    expect(page.status).toBe(400);
    expect(page.headers.get('location')).toBeNull();
    const html = await page.text();
    expect(html).toContain('Not verified by Agora');
    expect(html).toContain('Totally Agora Support');
    const link = new URL(returnLink(html));
    expect(`${link.origin}${link.pathname}`).toBe(REDIRECT);
    expect(Object.fromEntries(link.searchParams)).toEqual({
      error: 'invalid_request',
      error_description: expect.stringContaining('code_challenge'),
      state: 's1',
      iss: t.url,
    });

    await claim(clientId);
    const redirected = await fetch(`${t.url}${path}`, { redirect: 'manual' });
    expect(redirected.status).toBe(302);
    expect(redirected.headers.get('location')).toBe(link.toString());
  });

  it('answers prompt=none for a signed-out visitor with a page and a link, until the application is claimed', async () => {
    const clientId = await selfRegistered();
    const path = authorize(clientId, { code_challenge: challenge, code_challenge_method: 'S256', prompt: 'none' });
    const page = await fetch(`${t.url}${path}`, { redirect: 'manual' });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('You are not signed in to Agora');
    expect(Object.fromEntries(new URL(returnLink(html)).searchParams)).toMatchObject({ error: 'login_required', state: 's1' });

    await claim(clientId);
    const redirected = await fetch(`${t.url}${path}`, { redirect: 'manual' });
    expect(redirected.status).toBe(302);
    expect(new URL(redirected.headers.get('location')!).searchParams.get('error')).toBe('login_required');
  });

  it('says on the consent page that the application registered itself, and stops saying it once claimed', async () => {
    const clientId = await selfRegistered();
    const user = await createUser(t);
    const browser = new Browser(t.url);
    await signIn(browser, user.username, TEST_PASSWORD);
    const path = authorize(clientId, { code_challenge: challenge, code_challenge_method: 'S256' });
    const consent = await browser.get(path);
    expect(consent.status).toBe(200);
    const html = await consent.text();
    expect(html).toContain('Not verified by Agora');
    expect(html).toMatch(/Continue only if you trust <strong>self\.example<\/strong>/);

    await claim(clientId);
    const claimed = await (await browser.get(path)).text();
    expect(claimed).toContain('Authorize <span class="app-name">Totally Agora Support</span>');
    expect(claimed).not.toContain('Not verified by Agora');
  });

  it('says on the device consent page that the application registered itself, and stops saying it once claimed', async () => {
    const clientId = await selfRegistered();
    const started = await fetch(`${t.url}/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: clientId, scope: 'openid' }).toString(),
    });
    expect(started.status).toBe(200);
    const { user_code: userCode } = (await started.json()) as { user_code: string };
    const user = await createUser(t);
    const browser = new Browser(t.url);
    await signIn(browser, user.username, TEST_PASSWORD);
    const consent = async () =>
      (
        await browser.post('/oauth/device', { ...formFields(await (await browser.get('/oauth/device')).text()), user_code: userCode })
      ).text();
    const html = await consent();
    expect(html).toContain('Connect <span class="app-name">Totally Agora Support</span>');
    expect(html).toContain('Not verified by Agora');

    await claim(clientId);
    expect(await consent()).not.toContain('Not verified by Agora');
  });

  it('asks a signed-in user to confirm a logout without a hint under the same notice, then sends them back as chosen', async () => {
    const clientId = await selfRegistered();
    const user = await createUser(t);
    const browser = new Browser(t.url);
    await signIn(browser, user.username, TEST_PASSWORD);
    const confirm = await browser.get(
      `/oauth/logout?${new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: AFTER_LOGOUT, state: 'bye3' })}`,
    );
    expect(confirm.status).toBe(200);
    const html = await confirm.text();
    expect(html).toContain('Sign out of Agora?');
    expect(html).toContain('Not verified by Agora');
    expect(html).toMatch(/You will then be sent back to <strong>self\.example<\/strong>/);
    // The user has seen where it leads and chose to sign out: the usual redirect.
    const signedOut = await browser.post('/oauth/logout/confirm', formFields(html));
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get('location')).toBe(`${AFTER_LOGOUT}?state=bye3`);
  });

  it('shows a signed-out visitor the way back after logout as a link, until the application is claimed', async () => {
    const clientId = await selfRegistered();
    const path = `/oauth/logout?${new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: AFTER_LOGOUT, state: 'bye1' })}`;
    const page = await fetch(`${t.url}${path}`, { redirect: 'manual' });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('You are signed out');
    expect(html).toContain('Not verified by Agora');
    expect(returnLink(html)).toBe(`${AFTER_LOGOUT}?state=bye1`);

    await claim(clientId);
    const redirected = await fetch(`${t.url}${path}`, { redirect: 'manual' });
    expect(redirected.status).toBe(302);
    expect(redirected.headers.get('location')).toBe(`${AFTER_LOGOUT}?state=bye1`);
  });

  it('signs the user out on a valid id_token_hint, then shows the way back as a link rather than redirecting', async () => {
    const config = await client.dynamicClientRegistration(
      new URL(t.url),
      { client_name: 'Self-registered logout', redirect_uris: [CALLBACK], post_logout_redirect_uris: [AFTER_LOGOUT], scope: 'openid' },
      undefined,
      { execute: [client.allowInsecureRequests] },
    );
    const user = await createUser(t);
    const browser = new Browser(t.url);
    const { url, codeVerifier, state, nonce } = await authorizationRequestFor(config);
    const callback = new URL(await approveInBrowser(t, url, user, browser));
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: codeVerifier,
      expectedState: state,
      expectedNonce: nonce,
    });

    const logout = await browser.get(
      `/oauth/logout?${new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: AFTER_LOGOUT, state: 'bye2' })}`,
    );
    expect(logout.status).toBe(302);
    const next = logout.headers.get('location')!;
    expect(next.startsWith('/oauth/logout?')).toBe(true);
    const page = await browser.get(next);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('You are signed out');
    expect(returnLink(html)).toBe(`${AFTER_LOGOUT}?state=bye2`);
    // Signed out indeed: the dashboard asks to sign in.
    const dashboard = await browser.get('/applications');
    expect(dashboard.status).toBe(303);
    expect(dashboard.headers.get('location')).toMatch(/^\/sign-in/);
  });

  async function authorizationRequestFor(config: client.Configuration) {
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url, codeVerifier, state, nonce };
  }
});
