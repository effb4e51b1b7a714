import * as client from 'openid-client';
import { DataSource } from 'typeorm';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service.js';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { RefreshTokensService } from '../src/oauth/tokens/refresh-tokens.service.js';
import { UsersService } from '../src/users/users.service.js';
import type { User } from '../src/users/user.model.js';
import { Browser, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { graphql } from './support/http.js';
import {
  approveInBrowser,
  authorizationRequest,
  discover,
  discoverPublic,
  issueCode,
  REDIRECT_URI,
  registerApp,
  RegisteredApp,
  registerPublicApp,
} from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';

const OFFLINE_SCOPES = ['openid', 'profile', 'email', 'api', 'read_api', 'offline_access'];
const DAY_MS = 86_400_000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

interface SignedIn {
  user: User;
  app: RegisteredApp;
  config: client.Configuration;
  browser: Browser;
  tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;
}

/** A user signs in to a new application that may ask for offline_access, with openid-client driving the flow. */
async function signInWith(scope = 'openid api offline_access', options: { app?: RegisteredApp; user?: User } = {}): Promise<SignedIn> {
  const user = options.user ?? (await createUser(t));
  const app = options.app ?? (await registerApp(t, (await createUser(t)).id, OFFLINE_SCOPES));
  const config = await discover(t, app);
  const request = await authorizationRequest(config, scope);
  const browser = new Browser(t.url);
  const callback = new URL(await approveInBrowser(t, request.url, user, browser));
  const tokens = await client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: request.codeVerifier,
    expectedState: request.state,
    expectedNonce: scope.split(' ').includes('openid') ? request.nonce : undefined,
  });
  return { user, app, config, browser, tokens };
}

/** POST /oauth/token with grant_type=refresh_token, as a client would send it by hand. */
async function refresh(app: RegisteredApp, refreshToken: string, extra: Record<string, string> = {}) {
  const res = await fetch(`${t.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: app.clientId,
      client_secret: app.clientSecret,
      ...extra,
    }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, string | number> };
}

async function clientRequest(path: string, app: RegisteredApp, params: Record<string, string>) {
  const res = await fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, ...params }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function viewerStatus(accessToken: string): Promise<number> {
  return (await graphql(t.url, '{ viewer { id } }', { bearer: accessToken })).status;
}

function expectInvalidGrant(res: { status: number; body: Record<string, unknown> }): void {
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
}

/** Moves the test clock for one test and back after it. */
async function withTimeMoved(run: (advance: (ms: number) => void) => Promise<void>): Promise<void> {
  let moved = 0;
  try {
    await run((ms) => {
      moved += ms;
      t.clock.advance(ms);
    });
  } finally {
    t.clock.advance(-moved);
  }
}

describe('issuing a refresh token', () => {
  it('issues one, once, with its own prefix, when offline_access is granted; the consent page says so in plain words', async () => {
    const user = await createUser(t);
    const app = await registerApp(t, (await createUser(t)).id, OFFLINE_SCOPES);
    const config = await discover(t, app);
    const request = await authorizationRequest(config, 'openid api offline_access');
    const browser = new Browser(t.url);
    const first = await browser.get(request.url.pathname + request.url.search);
    const returnTo = new URL(first.headers.get('location')!, t.url).searchParams.get('return_to')!;
    const consent = await browser.follow(await signIn(browser, user.username, TEST_PASSWORD, returnTo));
    const page = await consent.res.text();
    expect(page).toContain('Keep access when you are not using the application');
    expect(page).toContain('<code>offline_access</code>');

    const { tokens } = await signInWith('openid api offline_access', { app, user });
    expect(tokens.refresh_token).toMatch(/^agora_ort_[0-9A-Za-z]{49}$/);
    expect(tokens.scope).toBe('openid api offline_access');
    expect(tokens.expires_in).toBe(3600);
    const rows: { token_hash: string }[] = await t
      .get(DataSource)
      .query(`SELECT token_hash FROM oauth_refresh_tokens WHERE application_id = $1`, [app.applicationId]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows)).not.toContain(tokens.refresh_token);
  });

  it('issues none without offline_access, even to an application that may ask for it', async () => {
    const { tokens } = await signInWith('openid api');
    expect(tokens.refresh_token).toBeUndefined();
    expect(Object.keys(tokens).sort()).toEqual(['access_token', 'expires_in', 'id_token', 'scope', 'token_type']);
  });

  it('refuses offline_access to an application not registered with it (invalid_scope)', async () => {
    const user = await createUser(t);
    const app = await registerApp(t, (await createUser(t)).id); // without offline_access
    const config = await discover(t, app);
    const request = await authorizationRequest(config, 'openid api offline_access');
    const browser = new Browser(t.url);
    await signIn(browser, user.username, TEST_PASSWORD);
    const res = await browser.get(request.url.pathname + request.url.search);
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_scope');
  });

  it('is not an API credential: a refresh token sent as Bearer → 401', async () => {
    const { tokens } = await signInWith();
    expect(await viewerStatus(tokens.refresh_token!)).toBe(401);
  });

  it('announces refresh_token and offline_access in discovery', async () => {
    const doc = (await (await fetch(`${t.url}/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
    expect(doc.grant_types_supported).toEqual([
      'authorization_code',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:device_code',
      'client_credentials',
    ]);
    expect(doc.scopes_supported).toContain('offline_access');
  });
});

describe('grant_type=refresh_token', () => {
  it('rotates: a new access token, refresh token and id_token (same auth_time, no nonce), driven by openid-client', async () => {
    const { user, app, config, tokens } = await signInWith('openid profile api offline_access');
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.token_type).toBe('bearer');
    expect(refreshed.expires_in).toBe(3600);
    expect(refreshed.scope).toBe('openid profile api offline_access');
    expect(refreshed.refresh_token).toMatch(/^agora_ort_/);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    const claims = refreshed.claims()!;
    expect(claims).toMatchObject({ iss: t.url, sub: user.id, aud: app.clientId, auth_time: tokens.claims()!.auth_time, name: user.name });
    expect(claims).not.toHaveProperty('nonce');
    expect(await viewerStatus(refreshed.access_token)).toBe(200);

    // The next rotation takes the newest token.
    const again = await client.refreshTokenGrant(config, refreshed.refresh_token!);
    expect(await viewerStatus(again.access_token)).toBe(200);
  });

  it('answers with no-store, and omits the id_token without openid', async () => {
    const { app, tokens } = await signInWith('api offline_access');
    const res = await refresh(app, tokens.refresh_token!);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'api offline_access' });
  });

  it('a used refresh token presented again fails and revokes the whole family: the newest access token stops at once', async () => {
    const { app, config, tokens } = await signInWith();
    const second = await client.refreshTokenGrant(config, tokens.refresh_token!);
    const third = await client.refreshTokenGrant(config, second.refresh_token!);
    expect(await viewerStatus(third.access_token)).toBe(200);

    expectInvalidGrant(await refresh(app, tokens.refresh_token!)); // the first one, used up

    expect(await viewerStatus(third.access_token)).toBe(401);
    expect(await viewerStatus(second.access_token)).toBe(401);
    expect(await viewerStatus(tokens.access_token)).toBe(401);
    expectInvalidGrant(await refresh(app, third.refresh_token!));
    // openid-client sees the same error.
    await expect(client.refreshTokenGrant(config, third.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('an authorization code redeemed twice revokes the refresh tokens that came from it, rotated or not', async () => {
    const user = await createUser(t);
    const app = await registerApp(t, (await createUser(t)).id, OFFLINE_SCOPES);
    const { code, verifier } = await issueCode(t, app, user.id, ['api', 'offline_access']);
    const exchange = () =>
      clientRequest('/oauth/token', app, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT_URI });
    const first = await exchange();
    expect(first.status).toBe(200);
    const rotated = await refresh(app, first.body.refresh_token as string);
    expect(rotated.status).toBe(200);

    expectInvalidGrant(await exchange());
    expect(await viewerStatus(rotated.body.access_token as string)).toBe(401);
    expectInvalidGrant(await refresh(app, rotated.body.refresh_token as string));
  });

  it('refuses another client’s refresh token (invalid_grant) and leaves it working for its own client', async () => {
    const { app, tokens } = await signInWith();
    const other = await registerApp(t, (await createUser(t)).id, OFFLINE_SCOPES);
    expectInvalidGrant(await refresh(other, tokens.refresh_token!));
    expect((await refresh(app, tokens.refresh_token!)).status).toBe(200);
  });

  it('narrows the scope of the access token on request; the refresh token keeps what was granted', async () => {
    const { app, tokens } = await signInWith('openid email api offline_access');
    const narrowed = await refresh(app, tokens.refresh_token!, { scope: 'api' });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBe('api');
    expect(narrowed.body).not.toHaveProperty('id_token');
    const introspected = await clientRequest('/oauth/introspect', app, { token: narrowed.body.access_token as string });
    expect(introspected.body).toMatchObject({ active: true, scope: 'api' });

    const full = await refresh(app, narrowed.body.refresh_token as string);
    expect(full.status).toBe(200);
    expect(full.body.scope).toBe('openid email api offline_access');
    expect(full.body.id_token).toEqual(expect.any(String));
  });

  it('refuses a wider scope (invalid_scope) without using the token up', async () => {
    const { app, tokens } = await signInWith('openid api offline_access');
    for (const scope of ['api email', 'admin', '']) {
      const res = await refresh(app, tokens.refresh_token!, { scope });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_scope');
    }
    expect((await refresh(app, tokens.refresh_token!)).status).toBe(200);
  });

  it('missing or malformed refresh_token → invalid_request / invalid_grant', async () => {
    const { app } = await signInWith();
    const missing = await clientRequest('/oauth/token', app, { grant_type: 'refresh_token' });
    expect(missing).toEqual({ status: 400, body: { error: 'invalid_request', error_description: 'refresh_token is required' } });
    expectInvalidGrant(await refresh(app, 'agora_ort_nonsense'));
    expectInvalidGrant(await refresh(app, `agora_ort_${'A'.repeat(49)}`));
  });

  it('of concurrent uses of one refresh token exactly one succeeds', async () => {
    const { app, tokens } = await signInWith();
    const results = await Promise.all(Array.from({ length: 10 }, () => refresh(app, tokens.refresh_token!)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 200)) expectInvalidGrant(r);

    // Closer together than HTTP brings them: the rotations themselves, at once.
    const next = await signInWith();
    const rotations = await Promise.all(
      Array.from({ length: 20 }, () => t.get(RefreshTokensService).rotate(next.app.applicationId, next.tokens.refresh_token!, null)),
    );
    expect(rotations.filter((r) => r.ok)).toHaveLength(1);
  });

  it('fails for a blocked user (invalid_grant) and works again once unblocked', async () => {
    const { user, app, tokens } = await signInWith();
    await t.get(UsersService).setState(user.username, 'blocked');
    expectInvalidGrant(await refresh(app, tokens.refresh_token!));
    await t.get(UsersService).setState(user.username, 'active');
    expect((await refresh(app, tokens.refresh_token!)).status).toBe(200);
  });

  it('expires when unused for the idle lifetime (OAUTH_REFRESH_TOKEN_IDLE_SECONDS, 14 days)', async () => {
    expect(t.config.oauth.refreshTokenIdleMs).toBe(14 * DAY_MS);
    const { app, tokens } = await signInWith('api offline_access');
    const kept = await signInWith('api offline_access', { app });
    await withTimeMoved(async (advance) => {
      advance(14 * DAY_MS - 60_000);
      const used = await refresh(app, kept.tokens.refresh_token!);
      expect(used.status).toBe(200); // used in time: a new idle period starts
      advance(120_000);
      const expired = await refresh(app, tokens.refresh_token!);
      expectInvalidGrant(expired);
      expect(expired.body.error_description).toMatch(/unused for too long/);
      expect((await refresh(app, used.body.refresh_token as string)).status).toBe(200);
    });
  });

  it('every token of a family expires at the absolute lifetime (OAUTH_REFRESH_TOKEN_ABSOLUTE_SECONDS, 90 days), however often used', async () => {
    expect(t.config.oauth.refreshTokenAbsoluteMs).toBe(90 * DAY_MS);
    const { app, tokens } = await signInWith('api offline_access');
    await withTimeMoved(async (advance) => {
      let current = tokens.refresh_token!;
      for (let day = 13; day < 90; day += 13) {
        advance(13 * DAY_MS);
        const res = await refresh(app, current);
        expect(res.status).toBe(200);
        current = res.body.refresh_token as string;
      }
      advance(13 * DAY_MS); // day 91
      const expired = await refresh(app, current);
      expectInvalidGrant(expired);
      expect(expired.body.error_description).toMatch(/sign in again/);
    });
  });
});

describe('revoking refresh tokens', () => {
  it('at /oauth/revoke (RFC 7009): the family and its access tokens, whatever the hint', async () => {
    const { app, config, tokens } = await signInWith();
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    const res = await clientRequest('/oauth/revoke', app, { token: refreshed.refresh_token!, token_type_hint: 'access_token' });
    expect(res).toEqual({ status: 200, body: {} });
    expect(await viewerStatus(refreshed.access_token)).toBe(401);
    expectInvalidGrant(await refresh(app, refreshed.refresh_token!));
    // Revoking again, or an unknown refresh token: the same answer.
    expect(await clientRequest('/oauth/revoke', app, { token: refreshed.refresh_token!, token_type_hint: 'refresh_token' })).toEqual({
      status: 200,
      body: {},
    });
  });

  it('at /oauth/revoke, another client’s refresh token is answered 200 and left alone', async () => {
    const { app, tokens } = await signInWith();
    const other = await registerApp(t, (await createUser(t)).id, OFFLINE_SCOPES);
    expect(await clientRequest('/oauth/revoke', other, { token: tokens.refresh_token! })).toEqual({ status: 200, body: {} });
    expect(await viewerStatus(tokens.access_token)).toBe(200);
    expect((await refresh(app, tokens.refresh_token!)).status).toBe(200);
  });

  it('introspection: active with token_type refresh_token for its own client, inactive otherwise', async () => {
    const { user, app, tokens } = await signInWith();
    const own = await clientRequest('/oauth/introspect', app, { token: tokens.refresh_token! });
    expect(own).toEqual({
      status: 200,
      body: {
        active: true,
        token_type: 'refresh_token',
        scope: 'openid api offline_access',
        client_id: app.clientId,
        username: user.username,
        sub: user.id,
        aud: app.clientId,
        iss: t.url,
        iat: expect.any(Number),
        exp: expect.any(Number),
      },
    });
    expect((own.body.exp as number) - (own.body.iat as number)).toBe(14 * 86400);
    const other = await registerApp(t, (await createUser(t)).id, OFFLINE_SCOPES);
    expect((await clientRequest('/oauth/introspect', other, { token: tokens.refresh_token! })).body).toEqual({ active: false });
    await refresh(app, tokens.refresh_token!);
    expect((await clientRequest('/oauth/introspect', app, { token: tokens.refresh_token! })).body).toEqual({ active: false });
  });

  it('from the dashboard’s Authorized applications: refresh tokens stop working too', async () => {
    const { app, browser, tokens } = await signInWith();
    const page = await (await browser.get('/account/authorized')).text();
    const href = `/account/authorized/${app.applicationId}/revoke`;
    expect(page).toContain(href);
    const { formFields } = await import('./support/browser.js');
    const confirm = await (await browser.get(href)).text();
    const { posted } = await browser.submit(href, formFields(confirm));
    expect(posted.status).toBe(303);
    expectInvalidGrant(await refresh(app, tokens.refresh_token!));
    expect(await viewerStatus(tokens.access_token)).toBe(401);
  });

  it('deleting the application deletes its refresh tokens', async () => {
    const { app } = await signInWith();
    const count = async () =>
      Number(
        (await t.get(DataSource).query(`SELECT count(*) AS n FROM oauth_refresh_tokens WHERE application_id = $1`, [app.applicationId]))[0]
          .n,
      );
    expect(await count()).toBe(1);
    await t.get(ApplicationsService).delete(app.applicationId);
    expect(await count()).toBe(0);
  });
});

describe('a public client (no secret, PKCE alone)', () => {
  async function publicSignIn() {
    const user = await createUser(t);
    const app = await registerPublicApp(t, (await createUser(t)).id, { scopes: OFFLINE_SCOPES });
    const config = await discoverPublic(t, app.clientId);
    const request = await authorizationRequest(config, 'openid api offline_access');
    const callback = new URL(await approveInBrowser(t, request.url, user));
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: request.codeVerifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
    });
    return { app, config, tokens };
  }

  async function publicRequest(path: string, clientId: string, params: Record<string, string>) {
    const res = await fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: clientId, ...params }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it('gets a refresh token that rotates; reusing an old one revokes the family, driven by openid-client', async () => {
    const { app, config, tokens } = await publicSignIn();
    expect(tokens.refresh_token).toMatch(/^agora_ort_/);
    const second = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(second.refresh_token).not.toBe(tokens.refresh_token);
    expect(await viewerStatus(second.access_token)).toBe(200);

    const reused = await publicRequest('/oauth/token', app.clientId, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! });
    expectInvalidGrant(reused);
    expect(await viewerStatus(second.access_token)).toBe(401);
    await expect(client.refreshTokenGrant(config, second.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('revokes its refresh token at /oauth/revoke with its client_id alone', async () => {
    const { app, tokens } = await publicSignIn();
    expect(await publicRequest('/oauth/revoke', app.clientId, { token: tokens.refresh_token! })).toEqual({ status: 200, body: {} });
    expect(await viewerStatus(tokens.access_token)).toBe(401);
    expectInvalidGrant(
      await publicRequest('/oauth/token', app.clientId, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }),
    );
  });

  it('cannot use a confidential client’s refresh token, nor can a confidential client use its', async () => {
    const { app, tokens } = await publicSignIn();
    const confidential = await signInWith();
    expectInvalidGrant(
      await publicRequest('/oauth/token', app.clientId, { grant_type: 'refresh_token', refresh_token: confidential.tokens.refresh_token! }),
    );
    expectInvalidGrant(await refresh(confidential.app, tokens.refresh_token!));
    // A public client that sends a secret is refused as a client.
    const withSecret = await publicRequest('/oauth/token', app.clientId, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_secret: 'agora_ocs_guess',
    });
    expect(withSecret.status).toBe(401);
    expect(withSecret.body.error).toBe('invalid_client');
  });
});

describe('housekeeping', () => {
  it('purges families that expired or were revoked more than a day ago, and keeps used tokens of a living family', async () => {
    const live = await signInWith('api offline_access');
    const rotated = await refresh(live.app, live.tokens.refresh_token!);
    const revoked = await signInWith('api offline_access');
    await clientRequest('/oauth/revoke', revoked.app, { token: revoked.tokens.refresh_token! });
    const idle = await signInWith('api offline_access');
    const rowsOf = async (app: RegisteredApp) =>
      Number(
        (await t.get(DataSource).query(`SELECT count(*) AS n FROM oauth_refresh_tokens WHERE application_id = $1`, [app.applicationId]))[0]
          .n,
      );
    await withTimeMoved(async (advance) => {
      advance(13 * DAY_MS);
      const kept = await refresh(live.app, rotated.body.refresh_token as string);
      expect(kept.status).toBe(200);
      advance(2 * DAY_MS); // the idle family ended a day ago; the revoked one thirteen days ago
      const purged = await t.get(HousekeepingService).run();
      expect(purged!.refreshTokens).toBeGreaterThanOrEqual(2);
      expect(await rowsOf(idle.app)).toBe(0);
      expect(await rowsOf(revoked.app)).toBe(0);
      expect(await rowsOf(live.app)).toBe(3);
      // The first token, used long ago, is still recognised as a reuse.
      expectInvalidGrant(await refresh(live.app, live.tokens.refresh_token!));
      expectInvalidGrant(await refresh(live.app, kept.body.refresh_token as string));
    });
  });
});
