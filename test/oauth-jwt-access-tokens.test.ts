import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { generateKeyPairSync } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { SigningKeysService } from '../src/oauth/keys/signing-keys.service.js';
import type { User } from '../src/users/user.model.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { approveInBrowser, authorizationRequest, REDIRECT_URI } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';

const UNAUTHORIZED = JSON.stringify({ message: '401 Unauthorized' });
const VIEWER = '{ viewer { id name } }';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ OAUTH_DYNAMIC_REGISTRATION: 'true', OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK: '1000' });
});
afterAll(() => t.close());

interface Registered {
  client_id: string;
  client_secret: string;
  access_token_format: string;
  id_token_signed_response_alg: string;
}

/** A client registered dynamically with `metadata` (RFC 7591), claimed by a user, as openid-client sees it. */
async function jwtClient(metadata: Record<string, unknown> = { access_token_format: 'jwt' }) {
  const res = await fetch(`${t.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Resource-server friendly client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      scope: 'openid profile api offline_access',
      ...metadata,
    }),
  });
  expect(res.status).toBe(201);
  const registered = (await res.json()) as Registered;
  const owner = await createUser(t);
  const applications = t.get(ApplicationsService);
  await applications.claim((await applications.findByClientId(registered.client_id))!.id, owner.id);
  const config = await client.discovery(
    new URL(t.url),
    registered.client_id,
    { client_secret: registered.client_secret, id_token_signed_response_alg: registered.id_token_signed_response_alg },
    client.ClientSecretPost(registered.client_secret),
    { execute: [client.allowInsecureRequests] },
  );
  return { registered, config };
}

async function tokensFor(config: client.Configuration, user: User, scope = 'openid profile api') {
  const { url, codeVerifier, state, nonce } = await authorizationRequest(config, scope);
  const callback = new URL(await approveInBrowser(t, url, user));
  return client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce });
}

/** What a resource server elsewhere does: verify the JWT against the JWKS (RFC 9068 §4). */
function verifyAsResourceServer(token: string, algorithms: string[] = ['RS256', 'ES256', 'EdDSA']) {
  return jwtVerify(token, createRemoteJWKSet(new URL(`${t.url}/oauth/discovery/keys`)), {
    issuer: t.url,
    audience: t.url,
    typ: 'at+jwt',
    algorithms,
    currentDate: t.clock.now(),
  });
}

function form(registered: Registered, fields: Record<string, string>) {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: registered.client_id, client_secret: registered.client_secret, ...fields }),
  };
}

async function introspect(registered: Registered, token: string): Promise<Record<string, unknown>> {
  return (await (await fetch(`${t.url}/oauth/introspect`, form(registered, { token }))).json()) as Record<string, unknown>;
}

async function expect401(token: string): Promise<void> {
  const res = await graphql(t.url, VIEWER, { bearer: token });
  expect(res.status).toBe(401);
  expect(res.text).toBe(UNAUTHORIZED);
  expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
}

describe('JWT access tokens (RFC 9068)', () => {
  it('issues a JWT that verifies against the JWKS with typ at+jwt, aud, iss, client_id and scope, and calls the API', async () => {
    const { registered, config } = await jwtClient();
    expect(registered.access_token_format).toBe('jwt');
    const user = await createUser(t);
    const tokens = await tokensFor(config, user);
    expect(tokens.expires_in).toBe(300);
    const header = decodeProtectedHeader(tokens.access_token);
    expect(header).toMatchObject({ typ: 'at+jwt', alg: 'RS256', kid: expect.any(String) });

    const { payload } = await verifyAsResourceServer(tokens.access_token);
    expect(payload).toEqual({
      iss: t.url,
      aud: t.url,
      sub: user.id,
      client_id: registered.client_id,
      scope: 'openid profile api',
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      iat: expect.any(Number),
      exp: expect.any(Number),
      auth_time: expect.any(Number),
      amr: ['pwd'],
      acr: expect.any(String),
    });
    expect(payload.exp! - payload.iat!).toBe(300);

    // oauth4webapi's resource-server validation of a JWT access token agrees.
    const as = await oauth.processDiscoveryResponse(
      new URL(t.url),
      await oauth.discoveryRequest(new URL(t.url), { [oauth.allowInsecureRequests]: true }),
    );
    const request = new Request(`${t.url}/graphql`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    const validated = await oauth.validateJwtAccessToken(as, request, t.url, {
      [oauth.allowInsecureRequests]: true,
      [oauth.clockSkew]: Math.round((t.clock.now().getTime() - Date.now()) / 1000),
    });
    expect(validated).toMatchObject({ sub: user.id, client_id: registered.client_id });

    const res = await graphql(t.url, VIEWER, { bearer: tokens.access_token });
    expect(res.status).toBe(200);
    expect(res.body.data?.viewer).toEqual({ id: user.id, name: user.name });
    const userinfo = await client.fetchUserInfo(config, tokens.access_token, user.id);
    expect(userinfo.sub).toBe(user.id);
  });

  it.each(['ES256', 'EdDSA'])('signs it with the client’s %s key', async (alg) => {
    const { config } = await jwtClient({ access_token_format: 'jwt', id_token_signed_response_alg: alg });
    const user = await createUser(t);
    const tokens = await tokensFor(config, user);
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ typ: 'at+jwt', alg });
    expect(decodeProtectedHeader(tokens.id_token!).alg).toBe(alg);
    expect((await verifyAsResourceServer(tokens.access_token, [alg])).payload.sub).toBe(user.id);
    expect((await graphql(t.url, VIEWER, { bearer: tokens.access_token })).body.data?.viewer).toMatchObject({ id: user.id });
  });

  it('answers introspection for it, and once revoked Agora refuses it at once and introspection says inactive', async () => {
    const { registered, config } = await jwtClient();
    const user = await createUser(t);
    const tokens = await tokensFor(config, user);
    const { payload } = await verifyAsResourceServer(tokens.access_token);
    expect(await introspect(registered, tokens.access_token)).toEqual({
      active: true,
      scope: 'openid profile api',
      client_id: registered.client_id,
      username: user.username,
      token_type: 'Bearer',
      exp: payload.exp,
      iat: expect.any(Number),
      sub: user.id,
      // The JWT's own audience: Agora's API.
      aud: t.url,
      iss: t.url,
    });
    // Warm the credential cache first, so the refusal below cannot come from a cold one.
    expect((await graphql(t.url, VIEWER, { bearer: tokens.access_token })).status).toBe(200);

    const revoked = await fetch(`${t.url}/oauth/revoke`, form(registered, { token: tokens.access_token }));
    expect(revoked.status).toBe(200);
    await expect401(tokens.access_token);
    expect(await introspect(registered, tokens.access_token)).toEqual({ active: false });
    // Still a valid signature: a resource server that does not introspect accepts it until exp (the documented bound).
    await expect(verifyAsResourceServer(tokens.access_token)).resolves.toBeTruthy();
  });

  it('refuses it after it expires, though the opaque tokens of other clients still live an hour', async () => {
    const { config } = await jwtClient();
    const user = await createUser(t);
    const tokens = await tokensFor(config, user);
    expect((await graphql(t.url, VIEWER, { bearer: tokens.access_token })).status).toBe(200);
    t.clock.advance(301_000);
    await expect401(tokens.access_token);
  });

  it('hands out a new JWT on refresh, the refresh token as before', async () => {
    const { config } = await jwtClient();
    const user = await createUser(t);
    const tokens = await tokensFor(config, user, 'openid api offline_access');
    expect(tokens.refresh_token).toMatch(/^agora_ort_/);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.refresh_token).toMatch(/^agora_ort_/);
    const { payload } = await verifyAsResourceServer(refreshed.access_token);
    expect(payload).toMatchObject({ sub: user.id, scope: 'openid api offline_access' });
    expect(payload.jti).not.toBe((await verifyAsResourceServer(tokens.access_token)).payload.jti);
    expect((await graphql(t.url, VIEWER, { bearer: refreshed.access_token })).status).toBe(200);
  });

  it('still issues opaque tokens to a client that did not ask, and refuses an unknown format', async () => {
    const { registered, config } = await jwtClient({});
    expect(registered.access_token_format).toBe('opaque');
    expect((await tokensFor(config, await createUser(t))).access_token).toMatch(/^agora_oat_/);
    for (const format of ['JWT', 'paseto', 1, ['jwt']]) {
      const res = await fetch(`${t.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT_URI], access_token_format: format }),
      });
      expect([format, res.status, ((await res.json()) as { error: string }).error]).toEqual([format, 400, 'invalid_client_metadata']);
    }
  });

  it('answers 401 in the API’s shape, never 5xx, for malformed, forged, foreign and confused JWTs', async () => {
    const { registered, config } = await jwtClient();
    const user = await createUser(t);
    const tokens = await tokensFor(config, user);
    const [header, payload, signature] = tokens.access_token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const { kid } = decodeProtectedHeader(tokens.access_token);
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const ours = await t.get(SigningKeysService).activeKey('RS256');
    const sign = (
      c: Record<string, unknown>,
      h: Record<string, unknown> = { alg: 'RS256', kid: ours.kid, typ: 'at+jwt' },
      key = ours.privateKey,
    ) => new SignJWT(c).setProtectedHeader(h as { alg: string }).sign(key);
    const bad: Record<string, string> = {
      'malformed: not base64': 'eyJhbGciOi.!!!.x',
      'malformed: two parts': `${header}.${payload}`,
      'malformed: header not JSON': `eyJub3Q.${payload}.${signature}`,
      'malformed: huge': `${header}.${'A'.repeat(5000)}.${signature}`,
      tampered: `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'someone-else' })).toString('base64url')}.${signature}`,
      'signed by another key with our kid': await sign(claims, { alg: 'RS256', kid: kid!, typ: 'at+jwt' }, other.privateKey),
      'a kid we never had': await sign(claims, { alg: 'RS256', kid: 'x'.repeat(43), typ: 'at+jwt' }, other.privateKey),
      'alg none': `${Buffer.from(JSON.stringify({ alg: 'none', kid, typ: 'at+jwt' })).toString('base64url')}.${payload}.`,
      'our key, no typ (an id_token)': tokens.id_token!,
      'our key, another audience': await sign({ ...claims, aud: 'https://elsewhere.example' }),
      'our key, another issuer': await sign({ ...claims, iss: 'https://issuer.example' }),
      'our key, a jti that is no token': await sign({ ...claims, jti: '00000000-0000-4000-8000-000000000000' }),
      'our key, a jti that is not a uuid': await sign({ ...claims, jti: "'; DROP TABLE users; --" }),
      'our key, another client_id': await sign({ ...claims, client_id: 'someone-else' }),
      'our key, expired': await sign({ ...claims, exp: Math.floor(t.clock.now().getTime() / 1000) - 10 }),
      'our key, no exp': await sign(Object.fromEntries(Object.entries(claims).filter(([k]) => k !== 'exp'))),
    };
    for (const [what, token] of Object.entries(bad)) {
      const res = await graphql(t.url, VIEWER, { bearer: token });
      expect([what, res.status, res.text]).toEqual([what, 401, UNAUTHORIZED]);
      expect(await introspect(registered, token)).toEqual({ active: false });
    }
    // The genuine token still works after all that.
    expect((await graphql(t.url, VIEWER, { bearer: tokens.access_token })).status).toBe(200);
  });

  it('is chosen on the application’s settings page in the dashboard, with the signing algorithm', async () => {
    const owner = await createUser(t);
    const { application, clientSecret } = await t
      .get(ApplicationsService)
      .create(owner.id, { name: 'Dashboard app', redirectUris: [REDIRECT_URI], scopes: ['openid', 'api'] });
    const browser = new Browser(t.url);
    await signIn(browser, owner.username, TEST_PASSWORD);
    const page = await (await browser.get(`/applications/${application.id}`)).text();
    expect(page).toMatch(/<input type="radio" name="access_token_format" value="opaque" checked/);
    expect(page).toMatch(/<input type="radio" name="id_token_signed_response_alg" value="RS256" checked/);
    const settings = (format: string, alg: string) => {
      const body = new URLSearchParams({ _csrf: formFields(page)._csrf!, name: 'Dashboard app', redirect_uris: REDIRECT_URI });
      for (const scope of ['openid', 'api']) body.append('scopes', scope);
      body.set('access_token_format', format);
      body.set('id_token_signed_response_alg', alg);
      return body;
    };

    const refused = await browser.post(`/applications/${application.id}`, settings('paseto', 'HS256'));
    expect(refused.status).toBe(422);
    const refusedPage = await refused.text();
    expect(refusedPage).toContain('Choose one of RS256, ES256, EdDSA');
    expect(refusedPage).toContain('Choose one of opaque, jwt');

    const saved = await browser.post(`/applications/${application.id}`, settings('jwt', 'EdDSA'));
    expect(saved.status).toBe(303);
    expect(await t.get(ApplicationsService).get(application.id)).toMatchObject({
      accessTokenFormat: 'jwt',
      idTokenSignedResponseAlg: 'EdDSA',
    });
    const after = await (await browser.get(`/applications/${application.id}`)).text();
    expect(after).toMatch(/<input type="radio" name="access_token_format" value="jwt" checked/);

    const config = await client.discovery(
      new URL(t.url),
      application.clientId,
      { client_secret: clientSecret!, id_token_signed_response_alg: 'EdDSA' },
      client.ClientSecretPost(clientSecret!),
      { execute: [client.allowInsecureRequests] },
    );
    const tokens = await tokensFor(config, await createUser(t), 'openid api');
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ typ: 'at+jwt', alg: 'EdDSA' });
  });
});
