import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import { Browser, formFields, signIn } from './support/browser.js';
import { TEST_PASSWORD, createUser } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { discover, REDIRECT_URI, registerApp, RegisteredApp, registerPublicApp } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';
import type { User } from '../src/users/user.model.js';

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

let t: TestApp;
let user: User;
let app: RegisteredApp;
let browser: Browser;

beforeAll(async () => {
  t = await startTestApp();
  user = await createUser(t);
  app = await registerApp(t, (await createUser(t)).id, ['openid', 'profile', 'api', 'offline_access']);
  browser = new Browser(t.url);
  await browser.follow(await signIn(browser, user.username, TEST_PASSWORD));
});
afterAll(() => t.close());

function authorizeQuery(overrides: Record<string, string | string[] | null> = {}, clientId = app.clientId): string {
  const params: Record<string, string | string[] | null> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope: 'openid api',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 'st-1',
    ...overrides,
  };
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === null) continue;
    for (const v of Array.isArray(value) ? value : [value]) search.append(name, v);
  }
  return `/oauth/authorize?${search.toString()}`;
}

/** The consent page of a request, approved: the response as the browser gets it (prompt=consent: never remembered). */
async function approve(query: string, as = browser): Promise<Response> {
  const consent = await as.get(`${query}&prompt=consent`);
  expect(consent.status).toBe(200);
  return as.post('/oauth/authorize', { ...formFields(await consent.text()), decision: 'approve' });
}

function redirectParams(res: Response): URLSearchParams {
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get('location')!);
  expect(location.origin + location.pathname).toBe(REDIRECT_URI);
  return location.searchParams;
}

async function token(form: Record<string, string | string[]>) {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries({ client_id: app.clientId, client_secret: app.clientSecret, ...form }))
    for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
  const res = await fetch(`${t.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

describe('request objects (OpenID Connect Core §6)', () => {
  it.each([
    ['request', 'request_not_supported'],
    ['request_uri', 'request_uri_not_supported'],
  ])('refuses %s by redirect with %s, state and iss', async (name, error) => {
    const value = name === 'request' ? 'eyJhbGciOiJub25lIn0.eyJzY29wZSI6Im9wZW5pZCJ9.' : 'https://client.example/request.jwt';
    const params = redirectParams(await browser.get(authorizeQuery({ [name]: value })));
    expect(params.get('error')).toBe(error);
    expect(params.get('error_description')).toMatch(/not supported/);
    expect(params.get('state')).toBe('st-1');
    expect(params.get('iss')).toBe(t.url);
    expect(params.has('code')).toBe(false);
  });

  it('checks the client and redirect URI first: an unknown client gets the error page, not a redirect', async () => {
    const res = await browser.get(authorizeQuery({ request: 'x.y.z' }, 'no-such-client'));
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toMatch(/No application is registered/);
  });

  it('discovery says request objects are not supported, and lists form_post', async () => {
    const metadata = (await (await fetch(`${t.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ request_parameter_supported: false, request_uri_parameter_supported: false });
    expect(metadata.response_modes_supported).toEqual(['query', 'form_post']);
  });
});

describe('response_mode', () => {
  it.each([['fragment'], ['jwt'], ['']])('refuses response_mode=%s with invalid_request in the query', async (mode) => {
    const params = redirectParams(await browser.get(authorizeQuery({ response_mode: mode })));
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('error_description')).toMatch(/response_mode must be one of: query, form_post/);
    expect(params.get('state')).toBe('st-1');
  });

  it('refuses response_mode given twice', async () => {
    const params = redirectParams(await browser.get(authorizeQuery({ response_mode: ['query', 'query'] })));
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('error_description')).toMatch(/response_mode parameter is given more than once/);
  });

  it('response_mode=query is the default, spelled out', async () => {
    const params = redirectParams(await approve(authorizeQuery({ response_mode: 'query' })));
    expect(params.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('several resource indicators (RFC 8707 §2)', () => {
  it('accepts several resources Agora protects, at the authorization and token endpoints', async () => {
    const resources = [t.url, `${t.url}/graphql`];
    const code = redirectParams(await approve(authorizeQuery({ resource: resources }))).get('code')!;
    const res = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: VERIFIER,
      resource: resources,
    });
    expect(res.status).toBe(200);
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: res.body.access_token! })).body.data?.viewer).toEqual({ id: user.id });
  });

  it('refuses the request when one of them is unknown: invalid_target', async () => {
    const params = redirectParams(await browser.get(authorizeQuery({ resource: [t.url, 'https://other.example/api'] })));
    expect(params.get('error')).toBe('invalid_target');
    const code = redirectParams(await approve(authorizeQuery())).get('code')!;
    const res = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: VERIFIER,
      resource: [t.url, 'https://other.example/api'],
    });
    expect(res).toEqual({ status: 400, body: expect.objectContaining({ error: 'invalid_target' }) });
    // Other parameters are still refused when repeated.
    const twice = await token({ grant_type: ['authorization_code', 'authorization_code'], code, redirect_uri: REDIRECT_URI });
    expect(twice).toEqual({ status: 400, body: expect.objectContaining({ error: 'invalid_request' }) });
  });
});

describe('a replayed device code', () => {
  it('revokes the access token and the refresh token it issued', async () => {
    const started = await fetch(`${t.url}/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, scope: 'api offline_access' }),
    });
    const { device_code, user_code } = (await started.json()) as { device_code: string; user_code: string };
    const entered = await browser.post('/oauth/device', { ...formFields(await (await browser.get('/oauth/device')).text()), user_code });
    const approved = await browser.post('/oauth/device', { ...formFields(await entered.text()), decision: 'approve' });
    expect(approved.status).toBe(303);
    const grant = { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code };
    const first = await token(grant);
    expect(first.status).toBe(200);
    expect(first.body.refresh_token).toBeDefined();

    t.clock.advance(5000);
    const replay = await token(grant);
    expect(replay).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'The device code was already used; the tokens issued from it are revoked' },
    });
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: first.body.access_token! })).status).toBe(401);
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token! });
    expect(refreshed).toEqual({ status: 400, body: expect.objectContaining({ error: 'invalid_grant' }) });
  });
});

describe('an authorization request posted as a form (OpenID Connect Core §3.1.2.1)', () => {
  it('is answered with a 303 to the same request as a GET, from any site, without a CSRF token', async () => {
    const params = new URLSearchParams(authorizeQuery({ prompt: 'consent' }).split('?')[1]);
    const posted = await fetch(`${t.url}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://client.example' },
      body: params,
    });
    expect(posted.status).toBe(303);
    const location = posted.headers.get('location')!;
    expect(location.startsWith('/oauth/authorize?')).toBe(true);
    expect([...new URLSearchParams(location.split('?')[1])].sort()).toEqual([...params].sort());
    // The GET it leads to is the ordinary request: the consent page for this signed-in browser.
    const consent = await browser.get(location);
    expect(consent.status).toBe(200);
    expect(await consent.text()).toMatch(/Authorize/);
  });

  it('still checks the consent form: a decision without a valid CSRF token is refused, and no code issued', async () => {
    const consent = await browser.get(authorizeQuery({ prompt: 'consent' }));
    const { _csrf: _, ...fields } = formFields(await consent.text());
    const res = await browser.post('/oauth/authorize', { ...fields, decision: 'approve' });
    expect(res.status).toBe(403);
    expect(res.headers.get('location')).toBeNull();
    const forged = await browser.post('/oauth/authorize', { ...fields, _csrf: 'forged' });
    expect(forged.status).toBe(403);
  });
});

describe('login_hint', () => {
  it('pre-fills the sign-in form reached from the authorization request, escaped', async () => {
    const hint = '"><script>alert(1)</script>ann@example.com';
    const anonymous = new Browser(t.url);
    const res = await anonymous.get(authorizeQuery({ login_hint: hint }));
    expect(res.status).toBe(302);
    const signInUrl = new URL(res.headers.get('location')!, t.url);
    expect(signInUrl.pathname).toBe('/sign-in');
    expect(signInUrl.searchParams.get('login_hint')).toBe(hint);
    const page = await (await anonymous.get(signInUrl.pathname + signInUrl.search)).text();
    expect(page).not.toContain('<script>alert(1)</script>');
    expect(page).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;ann@example.com"');
  });

  it('is only a suggestion: another account signs in and gets the code', async () => {
    const other = await createUser(t);
    const anonymous = new Browser(t.url);
    const res = await anonymous.get(authorizeQuery({ login_hint: user.username }));
    const returnTo = new URL(res.headers.get('location')!, t.url).searchParams.get('return_to')!;
    const { res: consent } = await anonymous.follow(await signIn(anonymous, other.username, TEST_PASSWORD, returnTo));
    expect(await consent.text()).toContain(`@${other.username}`);
  });
});

describe('response_mode=form_post (OAuth 2.0 Form Post Response Mode)', () => {
  it('answers with a page that posts code, state and iss to the redirect URI, under a CSP that allows only that', async () => {
    const config = await discover(t, app);
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid api',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 'fp-state',
      nonce: 'fp-nonce',
      response_mode: 'form_post',
    });
    const res = await approve(url.pathname + url.search);
    expect(res.status).toBe(200);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(html).toContain(`<form method="post" action="${REDIRECT_URI}">`);
    expect(html).toMatch(/<noscript><button type="submit">/);
    const fields = formFields(html);
    expect(Object.keys(fields).sort()).toEqual(['code', 'iss', 'state']);
    expect(fields).toMatchObject({ state: 'fp-state', iss: t.url });

    const script = /<script>([^<]*)<\/script>/.exec(html)![1]!;
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain(`'sha256-${createHash('sha256').update(script).digest('base64')}'`);
    expect(csp).toMatch(/form-action 'self' http:\/\/localhost:4000(;|$)/);
    expect(csp).not.toContain('unsafe-inline');

    // openid-client reads the posted response as the client's callback would receive it.
    const callback = new Request(REDIRECT_URI, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    });
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: 'fp-state',
      expectedNonce: 'fp-nonce',
    });
    expect(tokens.claims()?.sub).toBe(user.id);
  });

  it('posts errors too: a denial, and a request the server refuses', async () => {
    const consent = await browser.get(authorizeQuery({ response_mode: 'form_post', state: 'deny-fp', prompt: 'consent' }));
    const denied = await browser.post('/oauth/authorize', { ...formFields(await consent.text()), decision: 'deny' });
    expect(denied.status).toBe(200);
    expect(formFields(await denied.text())).toEqual({
      error: 'access_denied',
      error_description: 'The user denied the request',
      state: 'deny-fp',
      iss: t.url,
    });

    const refused = await browser.get(authorizeQuery({ response_mode: 'form_post', scope: 'openid admin' }));
    expect(refused.status).toBe(200);
    const fields = formFields(await refused.text());
    expect(fields).toMatchObject({ error: 'invalid_scope', state: 'st-1', iss: t.url });
  });

  it('for a self-registered application, shows the error with a button that posts it, never an automatic post', async () => {
    const selfRegistered = await registerPublicApp(t, null);
    const res = await browser.get(authorizeQuery({ response_mode: 'form_post', scope: 'openid admin' }, selfRegistered.clientId));
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).not.toMatch(/<script>[^<]/);
    expect(html).toContain(`<form method="post" action="${REDIRECT_URI}">`);
    expect(html).toMatch(/Not verified by Agora/);
    expect(formFields(html)).toMatchObject({ error: 'invalid_scope', iss: t.url });
  });
});
