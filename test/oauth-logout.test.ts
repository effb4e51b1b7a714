import * as client from 'openid-client';
import jwt from 'jsonwebtoken';
import { generateKeyPairSync } from 'node:crypto';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { SigningKeysService } from '../src/oauth/keys/signing-keys.service.js';
import { SessionsService } from '../src/sessions/sessions.service.js';
import type { User } from '../src/users/user.model.js';
import { Browser, formFields } from './support/browser.js';
import { createUser } from './support/fixtures.js';
import { approveInBrowser, authorizationRequest, discoverPublic, registerPublicApp, REDIRECT_URI } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';

const LOGOUT_URI = 'http://localhost:4000/signed-out';
const SESSION_COOKIE = 'agora_session';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

interface Client {
  clientId: string;
  name: string;
  config: client.Configuration;
}

/** A confidential or public client registered with a post-logout redirect URI, as openid-client sees it. */
async function newClient(kind: 'confidential' | 'public' = 'confidential'): Promise<Client> {
  const owner = await createUser(t);
  if (kind === 'public') {
    const app = await registerPublicApp(t, owner.id, { postLogoutRedirectUris: [LOGOUT_URI] });
    return { clientId: app.clientId, name: 'Public Test Client', config: await discoverPublic(t, app.clientId) };
  }
  const { application, clientSecret } = await t.get(ApplicationsService).create(owner.id, {
    name: 'Logout Test Client',
    redirectUris: [REDIRECT_URI],
    scopes: ['openid', 'profile', 'api'],
    postLogoutRedirectUris: [LOGOUT_URI, 'https://app.example.com/bye?from=agora'],
  });
  const config = await client.discovery(new URL(t.url), application.clientId, undefined, client.ClientSecretPost(clientSecret!), {
    execute: [client.allowInsecureRequests],
  });
  return { clientId: application.clientId, name: application.name, config };
}

/** A user signed in to Agora in `browser` through the client's authorization flow; returns the client's id_token. */
async function signInThrough(app: Client, user: User, browser: Browser): Promise<string> {
  const { url, codeVerifier, state, nonce } = await authorizationRequest(app.config, 'openid profile');
  const callback = new URL(await approveInBrowser(t, url, user, browser));
  const tokens = await client.authorizationCodeGrant(app.config, callback, {
    pkceCodeVerifier: codeVerifier,
    expectedState: state,
    expectedNonce: nonce,
    idTokenExpected: true,
  });
  return tokens.id_token!;
}

async function signedInUser(kind: 'confidential' | 'public' = 'confidential') {
  const app = await newClient(kind);
  const user = await createUser(t);
  const browser = new Browser(t.url);
  const idToken = await signInThrough(app, user, browser);
  expect((await browser.get('/account')).status).toBe(200);
  return { app, user, browser, idToken };
}

const pathOf = (url: URL) => url.pathname + url.search;
const logoutPath = (params: Record<string, string>) => `/oauth/logout?${new URLSearchParams(params).toString()}`;

/** Whether the browser's Agora session still works: the dashboard answers instead of asking to sign in. */
async function stillSignedIn(browser: Browser): Promise<boolean> {
  const res = await browser.get('/account');
  if (res.status === 200) return true;
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe('/sign-in?return_to=%2Faccount');
  return false;
}

/** A 400 error page that sends the browser nowhere. */
async function expectErrorPage(res: Response, message: string | RegExp): Promise<void> {
  expect(res.status).toBe(400);
  expect(res.headers.get('location')).toBeNull();
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  const body = await res.text();
  expect(body).toContain('This sign-out request is not valid');
  expect(body).toMatch(message);
}

/** An id_token signed with this server's own signing key, with the claims given. */
async function signedByServer(claims: Record<string, unknown>): Promise<string> {
  const { kid, privateKey } = await t.get(SigningKeysService).activeKey();
  return jwt.sign(claims, privateKey, { algorithm: 'RS256', keyid: kid });
}

describe('RP-initiated logout, driven by openid-client', () => {
  it('is advertised in discovery as end_session_endpoint', async () => {
    const app = await newClient();
    expect(app.config.serverMetadata().end_session_endpoint).toBe(`${t.url}/oauth/logout`);
  });

  it('ends the Agora session on a valid id_token_hint and returns to the registered URI with state', async () => {
    const { app, user, browser, idToken } = await signedInUser();
    const oldCookie = browser.cookie(SESSION_COOKIE)!;
    expect(oldCookie).toBeDefined();
    const state = client.randomState();
    const url = client.buildEndSessionUrl(app.config, { id_token_hint: idToken, post_logout_redirect_uri: LOGOUT_URI, state });
    expect(url.origin + url.pathname).toBe(`${t.url}/oauth/logout`);

    const res = await browser.get(pathOf(url));
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`${LOGOUT_URI}?state=${state}`);
    expect(res.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=;`))).toBe(true);
    expect(browser.cookie(SESSION_COOKIE)).toBeUndefined();

    // The dashboard asks for sign-in again, the old cookie no longer works anywhere, and no session row is left.
    expect(await stillSignedIn(browser)).toBe(false);
    const replayed = new Browser(t.url, t.url, new Map([[SESSION_COOKIE, oldCookie]]));
    expect(await stillSignedIn(replayed)).toBe(false);
    expect(await t.get(SessionsService).listForUser(user.id)).toEqual([]);
  });

  it('keeps a registered URI with its own query, adding state to it', async () => {
    const { app, browser, idToken } = await signedInUser();
    const url = client.buildEndSessionUrl(app.config, {
      id_token_hint: idToken,
      post_logout_redirect_uri: 'https://app.example.com/bye?from=agora',
      state: 'a b&c',
    });
    const res = await browser.get(pathOf(url));
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(location.origin + location.pathname).toBe('https://app.example.com/bye');
    expect(Object.fromEntries(location.searchParams)).toEqual({ from: 'agora', state: 'a b&c' });
  });

  it('returns to the URI exactly as registered when no state is sent', async () => {
    const { app, browser, idToken } = await signedInUser();
    const url = client.buildEndSessionUrl(app.config, { id_token_hint: idToken, post_logout_redirect_uri: LOGOUT_URI });
    const res = await browser.get(pathOf(url));
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(LOGOUT_URI);
  });

  it('without a post_logout_redirect_uri, signs out and shows that the browser is signed out', async () => {
    const { app, browser, idToken } = await signedInUser();
    const res = await browser.get(pathOf(client.buildEndSessionUrl(app.config, { id_token_hint: idToken })));
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/oauth/logout');
    const page = await browser.follow(res);
    expect(page.res.status).toBe(200);
    expect(await page.res.text()).toContain('You are signed out');
    expect(await stillSignedIn(browser)).toBe(false);
  });

  it('works for a public client too (no secret)', async () => {
    const { app, browser, idToken } = await signedInUser('public');
    const url = client.buildEndSessionUrl(app.config, { id_token_hint: idToken, post_logout_redirect_uri: LOGOUT_URI, state: 's-1' });
    const res = await browser.get(pathOf(url));
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`${LOGOUT_URI}?state=s-1`);
    expect(await stillSignedIn(browser)).toBe(false);
  });

  it('accepts an expired id_token as a hint (RP-Initiated Logout §2)', async () => {
    const { app, user, browser } = await signedInUser();
    const now = Math.floor(Date.now() / 1000);
    const expired = await signedByServer({ iss: t.url, sub: user.id, aud: app.clientId, iat: now - 86_400, exp: now - 82_800 });
    expect(() => jwt.decode(expired)).not.toThrow();
    const res = await browser.get(logoutPath({ id_token_hint: expired, post_logout_redirect_uri: LOGOUT_URI, state: 'old' }));
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`${LOGOUT_URI}?state=old`);
    expect(await stillSignedIn(browser)).toBe(false);
  });

  it('knows the client from the hint alone, and accepts client_id when it is the hint’s audience', async () => {
    const { app, browser, idToken } = await signedInUser();
    const res = await browser.get(
      logoutPath({ id_token_hint: idToken, client_id: app.clientId, post_logout_redirect_uri: LOGOUT_URI, state: 'x' }),
    );
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`${LOGOUT_URI}?state=x`);
  });

  it('takes the same request as a form post from the relying party’s site, without a CSRF token', async () => {
    const { browser, idToken } = await signedInUser();
    // Posted cross-site, the form carries no SameSite=Lax session cookie: the server goes on with a GET, which does.
    const anonymous = new Browser(t.url, 'http://localhost:4000');
    const posted = await anonymous.post('/oauth/logout', {
      id_token_hint: idToken,
      post_logout_redirect_uri: LOGOUT_URI,
      state: 'posted',
      ui_locales: 'fr',
      logout_hint: 'someone',
    });
    expect(posted.status).toBe(303);
    const next = new URL(posted.headers.get('location')!, t.url);
    expect(next.pathname).toBe('/oauth/logout');
    expect(Object.fromEntries(next.searchParams)).toEqual({
      id_token_hint: idToken,
      post_logout_redirect_uri: LOGOUT_URI,
      state: 'posted',
    });
    expect(await stillSignedIn(browser)).toBe(true);
    const res = await browser.get(pathOf(next));
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`${LOGOUT_URI}?state=posted`);
    expect(await stillSignedIn(browser)).toBe(false);
  });
});

describe('confirmation', () => {
  it('asks a signed-in user to confirm when there is no hint, with a CSRF-protected form', async () => {
    const { app, browser } = await signedInUser();
    const res = await browser.get(logoutPath({ client_id: app.clientId, post_logout_redirect_uri: LOGOUT_URI, state: 'confirm-1' }));
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain('Sign out of Agora?');
    expect(body).toContain(`${app.name}</span> asked you to sign out`);
    expect(body).toContain('localhost:4000');
    expect(res.headers.get('content-security-policy')).toMatch(/form-action 'self' http:\/\/localhost:4000/);
    expect(await stillSignedIn(browser)).toBe(true);

    const fields = formFields(body);
    expect(fields).toMatchObject({ client_id: app.clientId, post_logout_redirect_uri: LOGOUT_URI, state: 'confirm-1' });
    const { _csrf, ...withoutToken } = fields;
    // A forged post: without the token, with another token, or from another site.
    expect((await browser.post('/oauth/logout/confirm', withoutToken)).status).toBe(403);
    expect((await browser.post('/oauth/logout/confirm', { ...withoutToken, _csrf: 'forged' })).status).toBe(403);
    expect((await browser.post('/oauth/logout/confirm', fields, { origin: 'http://localhost:4000' })).status).toBe(403);
    expect(await stillSignedIn(browser)).toBe(true);

    const confirmed = await browser.post('/oauth/logout/confirm', { ...fields, _csrf: _csrf! });
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get('location')).toBe(`${LOGOUT_URI}?state=confirm-1`);
    expect(await stillSignedIn(browser)).toBe(false);
  });

  it('asks to confirm when the hint names someone else than the user signed in', async () => {
    const { app, idToken } = await signedInUser();
    const other = await createUser(t);
    const browser = new Browser(t.url);
    await signInThrough(app, other, browser);
    const res = await browser.get(logoutPath({ id_token_hint: idToken, post_logout_redirect_uri: LOGOUT_URI }));
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Sign out of Agora?');
    expect(await stillSignedIn(browser)).toBe(true);
  });

  it('asks to confirm a bare request, then shows the signed-out page', async () => {
    const { browser } = await signedInUser();
    const res = await browser.get('/oauth/logout');
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain('An application asked you to sign out');
    const confirmed = await browser.post('/oauth/logout/confirm', formFields(body));
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get('location')).toBe('/oauth/logout');
    const page = await browser.follow(confirmed);
    expect(await page.res.text()).toContain('You are signed out');
    expect(await stillSignedIn(browser)).toBe(false);
  });

  it('needs no confirmation from a browser that is not signed in', async () => {
    const app = await newClient();
    const browser = new Browser(t.url);
    const back = await browser.get(logoutPath({ client_id: app.clientId, post_logout_redirect_uri: LOGOUT_URI, state: 'anon' }));
    expect(back.status).toBe(302);
    expect(back.headers.get('location')).toBe(`${LOGOUT_URI}?state=anon`);
    const page = await browser.get('/oauth/logout');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('You are signed out');
  });
});

describe('refused requests: a 400 page, never a redirect, and the session left alone', () => {
  it('refuses a post_logout_redirect_uri not registered for the client', async () => {
    const { app, browser, idToken } = await signedInUser();
    for (const uri of [
      `${LOGOUT_URI}/more`,
      `${LOGOUT_URI}?x=1`,
      'http://LOCALHOST:4000/signed-out',
      'https://evil.example/signed-out',
      REDIRECT_URI, // a redirect URI for codes is not a post-logout redirect URI
      'not a url',
    ]) {
      await expectErrorPage(await browser.get(logoutPath({ id_token_hint: idToken, post_logout_redirect_uri: uri })), /not registered/);
      await expectErrorPage(await browser.get(logoutPath({ client_id: app.clientId, post_logout_redirect_uri: uri })), /not registered/);
    }
    expect(await stillSignedIn(browser)).toBe(true);
  });

  it('refuses a post_logout_redirect_uri without a client to check it against', async () => {
    const { browser } = await signedInUser();
    await expectErrorPage(await browser.get(logoutPath({ post_logout_redirect_uri: LOGOUT_URI })), /needs the client/);
    await expectErrorPage(await new Browser(t.url).get(logoutPath({ post_logout_redirect_uri: LOGOUT_URI })), /needs the client/);
    expect(await stillSignedIn(browser)).toBe(true);
  });

  it('refuses an unknown client_id', async () => {
    const { browser } = await signedInUser();
    await expectErrorPage(await browser.get(logoutPath({ client_id: 'no-such-client' })), /No application/);
    expect(await stillSignedIn(browser)).toBe(true);
  });

  it('refuses a client_id that is not the hint’s audience', async () => {
    const { browser, idToken } = await signedInUser();
    const other = await newClient();
    await expectErrorPage(
      await browser.get(logoutPath({ id_token_hint: idToken, client_id: other.clientId, post_logout_redirect_uri: LOGOUT_URI })),
      /not the audience/,
    );
    expect(await stillSignedIn(browser)).toBe(true);
  });

  it('refuses a hint that is not an id_token this server issued', async () => {
    const { app, user, browser, idToken } = await signedInUser();
    const [header, payload, signature] = idToken.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const { kid } = JSON.parse(Buffer.from(header, 'base64url').toString()) as { kid: string };
    const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const now = Math.floor(Date.now() / 1000);
    const forged = {
      // The claims changed, the signature kept.
      tampered: `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'someone-else' })).toString('base64url')}.${signature}`,
      'signed by another key with our kid': jwt.sign(claims, otherKey, { algorithm: 'RS256', keyid: kid }),
      'signed by a key we never had': jwt.sign(claims, otherKey, { algorithm: 'RS256', keyid: 'x'.repeat(43) }),
      'unsigned (alg none)': jwt.sign(claims, null, { algorithm: 'none' }),
      'another issuer': await signedByServer({ ...claims, iss: 'https://issuer.example' }),
      'no sub': await signedByServer({ iss: t.url, aud: app.clientId, iat: now, exp: now + 60 }),
      'no aud': await signedByServer({ iss: t.url, sub: user.id, iat: now, exp: now + 60 }),
      'not a JWT': 'not-a-jwt',
      'a JWT header only': `${header}..`,
      // Found by the fuzz tier: jsonwebtoken's decode threw on it (a 500).
      'a payload that is not JSON': `${header}.JV8l.${signature}`,
    };
    for (const [what, token] of Object.entries(forged)) {
      const res = await browser.get(logoutPath({ id_token_hint: token, post_logout_redirect_uri: LOGOUT_URI }));
      expect([what, res.status]).toEqual([what, 400]);
      await expectErrorPage(res, /not an ID token issued by this server/);
    }
    expect(await stillSignedIn(browser)).toBe(true);
  });

  it('refuses the relying party’s form post when it is invalid, on the same page', async () => {
    const { browser } = await signedInUser();
    const rp = new Browser(t.url, 'http://localhost:4000');
    await expectErrorPage(await rp.post('/oauth/logout', { id_token_hint: 'forged', state: 's' }), /not an ID token/);
    await expectErrorPage(await rp.post('/oauth/logout', { post_logout_redirect_uri: 'https://evil.example/' }), /needs the client/);
    expect(await stillSignedIn(browser)).toBe(true);
  });
});

describe('bad input: a clear 400, never a 500', () => {
  it('refuses a parameter given twice, in the query and in a form', async () => {
    const { app, browser } = await signedInUser();
    const query = new URLSearchParams([
      ['client_id', app.clientId],
      ['state', 'a'],
      ['state', 'b'],
    ]);
    await expectErrorPage(await browser.get(`/oauth/logout?${query.toString()}`), /state parameter is given more than once/);
    const rp = new Browser(t.url, 'http://localhost:4000');
    await expectErrorPage(await rp.post('/oauth/logout', query), /state parameter is given more than once/);
    const confirm = await browser.get(logoutPath({ client_id: app.clientId }));
    const { _csrf } = formFields(await confirm.text());
    const twice = new URLSearchParams([
      ['_csrf', _csrf!],
      ['client_id', app.clientId],
      ['client_id', app.clientId],
    ]);
    await expectErrorPage(await browser.post('/oauth/logout/confirm', twice), /client_id parameter is given more than once/);
    expect(await stillSignedIn(browser)).toBe(true);
  });

  it('refuses huge values', async () => {
    const { app, browser } = await signedInUser();
    await expectErrorPage(await browser.get(logoutPath({ id_token_hint: 'e'.repeat(8_000) })), /id_token_hint parameter is longer/);
    await expectErrorPage(
      await browser.get(logoutPath({ client_id: app.clientId, state: 's'.repeat(5_000) })),
      /state parameter is longer/,
    );
    const rp = new Browser(t.url, 'http://localhost:4000');
    await expectErrorPage(await rp.post('/oauth/logout', { id_token_hint: 'e'.repeat(500_000) }), /id_token_hint parameter is longer/);
    await expectErrorPage(
      await rp.post('/oauth/logout', { client_id: app.clientId, post_logout_redirect_uri: `${LOGOUT_URI}/${'p'.repeat(100_000)}` }),
      /post_logout_redirect_uri parameter is longer/,
    );
    // Beyond the body limit, Fastify refuses before the handler: still a page, not a 500.
    const tooLarge = await rp.post('/oauth/logout', { id_token_hint: 'e'.repeat(1_100_000) });
    expect(tooLarge.status).toBe(413);
    expect(await stillSignedIn(browser)).toBe(true);
  });

  it('refuses U+0000 and other text that cannot be stored', async () => {
    const { app, browser } = await signedInUser();
    for (const encoded of ['a%00b', 'a%01b', 'a%7Fb']) {
      const res = await browser.get(`/oauth/logout?client_id=${app.clientId}&state=${encoded}`);
      expect([encoded, res.status]).toEqual([encoded, 400]);
      expect(res.headers.get('location')).toBeNull();
      const posted = await fetch(`${t.url}/oauth/logout`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:4000' },
        body: `client_id=${app.clientId}&state=${encoded}`,
        redirect: 'manual',
      });
      expect([encoded, posted.status]).toEqual([encoded, 400]);
    }
    // Bytes that are not UTF-8 read as U+FFFD: text like any other, here a state for the confirmation page.
    for (const encoded of ['%ED%A0%80', 'a%C0b', '%', '%zz']) {
      const res = await browser.get(`/oauth/logout?client_id=${app.clientId}&state=${encoded}`);
      expect([encoded, res.status < 500]).toEqual([encoded, true]);
    }
    expect(await stillSignedIn(browser)).toBe(true);
  });

  it('refuses a form whose values are not text (a JSON body)', async () => {
    const res = await fetch(`${t.url}/oauth/logout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/html' },
      body: JSON.stringify({ state: 5, client_id: ['a'] }),
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.headers.get('location')).toBeNull();
  });

  it('ignores ui_locales and logout_hint', async () => {
    const { app, browser, idToken } = await signedInUser();
    const res = await browser.get(
      logoutPath({
        id_token_hint: idToken,
        client_id: app.clientId,
        post_logout_redirect_uri: LOGOUT_URI,
        ui_locales: 'de fr',
        logout_hint: 'x',
      }),
    );
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(LOGOUT_URI);
  });
});

describe('signing keys', () => {
  it('accepts a hint signed by a key retired long ago', async () => {
    const { browser, idToken } = await signedInUser();
    const kid = (jwt.decode(idToken, { complete: true })!.header as { kid: string }).kid;
    await t.get(SigningKeysService).rotate();
    // Past the time the retired key stays in the JWKS.
    t.clock.advance(3 * 3_600_000);
    const { keys } = (await (await fetch(`${t.url}/oauth/discovery/keys`)).json()) as { keys: { kid: string }[] };
    expect(keys.map((k) => k.kid)).not.toContain(kid);
    const res = await browser.get(logoutPath({ id_token_hint: idToken, post_logout_redirect_uri: LOGOUT_URI }));
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(LOGOUT_URI);
  });
});
