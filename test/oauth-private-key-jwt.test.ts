import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as jose from 'jose';
import * as client from 'openid-client';
import { DataSource } from 'typeorm';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { ClientAssertionVerifier } from '../src/oauth/clients/client-assertion.js';
import { createUser } from './support/fixtures.js';
import { approveInBrowser, authorizationRequest, REDIRECT_URI } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

let t: TestApp;
/** The client's own server, publishing its public keys at /jwks.json (what a jwks_uri names). */
let keyServer: Server;
let keyServerUrl: string;
let published: { keys: jose.JWK[] } = { keys: [] };
let keyFetches = 0;

beforeAll(async () => {
  // The key server listens on 127.0.0.1 over http: allowed here as webhooks' tests allow their receivers.
  t = await startTestApp({
    OAUTH_DYNAMIC_REGISTRATION: 'true',
    OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK: '1000',
    OAUTH_JWKS_URI_ALLOW_PRIVATE_TARGETS: 'true',
    OAUTH_JWKS_URI_ALLOW_HTTP: 'true',
  });
  keyServer = createServer((req, res) => {
    if (req.url === '/jwks.json') {
      keyFetches += 1;
      res.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(JSON.stringify(published));
    } else if (req.url === '/huge.json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [], padding: 'x'.repeat(100_000) }));
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
  keyServerUrl = `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => keyServer.close(resolve));
  await t.close();
});

interface KeyPair {
  privateKey: jose.CryptoKey;
  publicJwk: jose.JWK;
  alg: string;
  kid: string;
}

async function keyPair(
  alg: 'ES256' | 'RS256' | 'PS256' | 'EdDSA',
  kid = `${alg}-${Math.random().toString(36).slice(2)}`,
): Promise<KeyPair> {
  const { privateKey, publicKey } = await jose.generateKeyPair(alg, { extractable: true });
  return { privateKey, publicJwk: { ...(await jose.exportJWK(publicKey)), kid, alg, use: 'sig' }, alg, kid };
}

/** A private_key_jwt application owned by a new user, with its keys by value or by address. */
async function keyClient(keys: { jwks: { keys: jose.JWK[] } } | { jwksUri: string }) {
  const owner = await createUser(t);
  const { application, clientSecret } = await t.get(ApplicationsService).create(owner.id, {
    name: 'Nightly sync',
    redirectUris: [REDIRECT_URI],
    scopes: ['openid', 'profile', 'email', 'api', 'offline_access'],
    authentication: { tokenEndpointAuthMethod: 'private_key_jwt', ...keys },
  });
  expect(clientSecret).toBeUndefined();
  return application;
}

function discover(clientId: string, key: KeyPair): Promise<client.Configuration> {
  return client.discovery(new URL(t.url), clientId, undefined, client.PrivateKeyJwt({ key: key.privateKey, kid: key.kid }), {
    execute: [client.allowInsecureRequests],
  });
}

/** An assertion as a client would sign it by hand, on the server's clock; `claims` override the defaults. */
async function assertion(clientId: string, key: KeyPair, claims: jose.JWTPayload = {}, header: Partial<jose.JWTHeaderParameters> = {}) {
  const now = Math.floor(t.clock.now().getTime() / 1000);
  return new jose.SignJWT({ iss: clientId, sub: clientId, aud: t.url, jti: crypto.randomUUID(), iat: now, exp: now + 60, ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, ...header })
    .sign(key.privateKey);
}

async function post(
  path: string,
  params: Record<string, string>,
): Promise<{ status: number; body: Record<string, any>; headers: Headers }> {
  const res = await fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

/** An introspection of a token nobody has: 200 `active: false` from a client the server authenticated. */
function introspectWith(clientAssertion: string, extra: Record<string, string> = {}) {
  return post('/oauth/introspect', {
    token: 'agora_oat_unknown',
    client_assertion_type: JWT_BEARER,
    client_assertion: clientAssertion,
    ...extra,
  });
}

function expectInvalidClient(res: { status: number; body: Record<string, any> }, description: RegExp): void {
  expect(res.status).toBe(401);
  expect(res.body).toEqual({ error: 'invalid_client', error_description: expect.stringMatching(description) });
}

describe('private_key_jwt client authentication (RFC 7523)', () => {
  it('is announced by discovery, with the signing algorithms, for the token, revocation and introspection endpoints', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const metadata = (await (await fetch(`${t.url}${path}`)).json()) as Record<string, string[]>;
      for (const endpoint of ['token_endpoint', 'revocation_endpoint', 'introspection_endpoint']) {
        expect(metadata[`${endpoint}_auth_methods_supported`]).toContain('private_key_jwt');
        expect(metadata[`${endpoint}_auth_signing_alg_values_supported`]).toEqual(['RS256', 'PS256', 'ES256', 'EdDSA']);
      }
    }
  });

  it('exchanges a code, introspects and revokes with openid-client PrivateKeyJwt (keys by value)', async () => {
    const key = await keyPair('ES256');
    const app = await keyClient({ jwks: { keys: [key.publicJwk] } });
    const user = await createUser(t);
    const config = await discover(app.clientId, key);
    const { url, codeVerifier, state, nonce } = await authorizationRequest(config, 'openid profile api offline_access');
    const callback = new URL(await approveInBrowser(t, url, user));
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: codeVerifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    expect(tokens.claims()!.sub).toBe(user.id);

    const introspected = await client.tokenIntrospection(config, tokens.access_token);
    expect(introspected).toMatchObject({ active: true, client_id: app.clientId, sub: user.id });

    await client.tokenRevocation(config, tokens.access_token);
    expect(await client.tokenIntrospection(config, tokens.access_token)).toEqual({ active: false });
    expect(await client.tokenIntrospection(config, tokens.refresh_token!)).toMatchObject({ active: true, token_type: 'refresh_token' });
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(await client.tokenIntrospection(config, refreshed.access_token)).toMatchObject({ active: true, sub: user.id });
  });

  it('accepts RS256, PS256 and EdDSA assertions as well as ES256, and at the device authorization endpoint', async () => {
    const keys = await Promise.all([keyPair('RS256'), keyPair('PS256'), keyPair('EdDSA')]);
    const app = await keyClient({ jwks: { keys: keys.map((k) => k.publicJwk) } });
    for (const key of keys) {
      const res = await introspectWith(await assertion(app.clientId, key));
      expect([key.alg, res.status, res.body]).toEqual([key.alg, 200, { active: false }]);
    }
    const config = await discover(app.clientId, keys[0]!);
    const device = await client.initiateDeviceAuthorization(config, { scope: 'api' });
    expect(device.user_code).toEqual(expect.any(String));
  });

  it('refuses a replayed assertion: its jti is spent, on every instance (stored until it expires)', async () => {
    const key = await keyPair('ES256');
    const app = await keyClient({ jwks: { keys: [key.publicJwk] } });
    const signed = await assertion(app.clientId, key);
    expect((await introspectWith(signed)).status).toBe(200);
    expectInvalidClient(await introspectWith(signed), /used before/);
    // At another endpoint too: one jti, one request.
    expectInvalidClient(
      await post('/oauth/revoke', { token: 'x', client_assertion_type: JWT_BEARER, client_assertion: signed }),
      /used before/,
    );

    const rows = (await t
      .get(DataSource)
      .query('SELECT jti, expires_at FROM oauth_client_assertions WHERE application_id = $1', [app.id])) as {
      jti: string;
      expires_at: Date;
    }[];
    expect(rows).toEqual([{ jti: jose.decodeJwt(signed).jti, expires_at: new Date(jose.decodeJwt(signed).exp! * 1000) }]);
    // Housekeeping forgets it once it has expired, when it could no longer be replayed anyway.
    expect(await t.get(ClientAssertionVerifier).purgeExpired()).toBe(0);
    t.clock.advance(5 * 60_000);
    try {
      expect(await t.get(ClientAssertionVerifier).purgeExpired()).toBeGreaterThanOrEqual(1);
      expectInvalidClient(await introspectWith(signed), /expired/);
    } finally {
      t.clock.advance(-5 * 60_000);
    }
  });

  it('refuses a wrong aud, an expired assertion, one valid too long, a missing jti, a wrong iss or sub', async () => {
    const key = await keyPair('ES256');
    const app = await keyClient({ jwks: { keys: [key.publicJwk] } });
    const now = Math.floor(t.clock.now().getTime() / 1000);
    expectInvalidClient(await introspectWith(await assertion(app.clientId, key, { aud: 'https://elsewhere.example' })), /aud/);
    expectInvalidClient(await introspectWith(await assertion(app.clientId, key, { iat: now - 600, exp: now - 120 })), /expired/);
    expectInvalidClient(await introspectWith(await assertion(app.clientId, key, { exp: now + 3600 })), /expire within 600 seconds/);
    expectInvalidClient(await introspectWith(await assertion(app.clientId, key, { jti: undefined })), /jti/);
    expectInvalidClient(await introspectWith(await assertion(app.clientId, key, { iss: 'someone-else' })), /iss must be the client id/);
    expectInvalidClient(await introspectWith(await assertion(app.clientId, key), { client_id: 'another-client' }), /client_id differs/);
    // The token endpoint URL and the endpoint called are audiences too.
    expect((await introspectWith(await assertion(app.clientId, key, { aud: `${t.url}/oauth/token` }))).status).toBe(200);
    expect((await introspectWith(await assertion(app.clientId, key, { aud: [`${t.url}/oauth/introspect`, 'x'] }))).status).toBe(200);
  });

  it('refuses alg none, HS256 and a key that is not the client’s', async () => {
    const key = await keyPair('ES256');
    const app = await keyClient({ jwks: { keys: [key.publicJwk] } });
    const now = Math.floor(t.clock.now().getTime() / 1000);
    const claims = { iss: app.clientId, sub: app.clientId, aud: t.url, jti: crypto.randomUUID(), exp: now + 60 };
    const unsecured = new jose.UnsecuredJWT(claims).encode();
    expectInvalidClient(await introspectWith(unsecured), /RS256, PS256, ES256, EdDSA/);
    const hs = await new jose.SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: key.kid })
      .sign(new TextEncoder().encode('x'.repeat(32)));
    expectInvalidClient(await introspectWith(hs), /RS256, PS256, ES256, EdDSA/);
    const stranger = await keyPair('ES256', key.kid);
    expectInvalidClient(await introspectWith(await assertion(app.clientId, stranger)), /signature/);
    expectInvalidClient(await introspectWith('not.a.jwt'), /not a JWT/);
    expectInvalidClient(
      await post('/oauth/introspect', { token: 'x', client_assertion_type: 'urn:other', client_assertion: 'a.b.c' }),
      /client_assertion_type/,
    );
  });

  it('never lets a private_key_jwt client use a secret, nor a secret client an assertion', async () => {
    const key = await keyPair('ES256');
    const app = await keyClient({ jwks: { keys: [key.publicJwk] } });
    expectInvalidClient(
      await post('/oauth/introspect', { token: 'x', client_id: app.clientId, client_secret: 'agora_ocs_guess' }),
      /private_key_jwt/,
    );
    expectInvalidClient(await post('/oauth/introspect', { token: 'x', client_id: app.clientId }), /private_key_jwt/);

    const owner = await createUser(t);
    const { application: secretApp, clientSecret } = await t
      .get(ApplicationsService)
      .create(owner.id, { name: 'Secret client', redirectUris: [REDIRECT_URI], scopes: ['api'] });
    expectInvalidClient(await introspectWith(await assertion(secretApp.clientId, key)), /client secret, not with a client assertion/);
    const both = await introspectWith(await assertion(app.clientId, key), { client_secret: clientSecret! });
    expect(both.status).toBe(400);
    expect(both.body.error).toBe('invalid_request');
  });

  it('fetches keys from a jwks_uri once, refetches for an unknown kid at most every OAUTH_JWKS_URI_REFETCH_SECONDS', async () => {
    const first = await keyPair('RS256');
    published = { keys: [first.publicJwk] };
    const app = await keyClient({ jwksUri: `${keyServerUrl}/jwks.json` });
    keyFetches = 0;
    const config = await discover(app.clientId, first);
    for (let i = 0; i < 3; i++) expect(await client.tokenIntrospection(config, 'agora_oat_unknown')).toEqual({ active: false });
    expect(keyFetches).toBe(1);

    // The client rotates in a new key: the first assertion with it refetches the set.
    const second = await keyPair('ES256');
    published = { keys: [first.publicJwk, second.publicJwk] };
    t.clock.advance(61_000);
    try {
      expect((await introspectWith(await assertion(app.clientId, second))).status).toBe(200);
      expect(keyFetches).toBe(2);
      // Forged kids right after do not make Agora ask again within the interval.
      const forged = await keyPair('ES256', 'no-such-kid');
      for (let i = 0; i < 3; i++) expectInvalidClient(await introspectWith(await assertion(app.clientId, forged)), /No key/);
      expect(keyFetches).toBe(2);
    } finally {
      t.clock.advance(-61_000);
    }
  });

  it('refuses a jwks_uri document over the size cap, and one that is not there, with invalid_client', async () => {
    const key = await keyPair('ES256');
    const huge = await keyClient({ jwksUri: `${keyServerUrl}/huge.json` });
    expectInvalidClient(
      await introspectWith(await assertion(huge.clientId, key)),
      /jwks_uri could not be read: the document is larger than 65536 bytes/,
    );
    const missing = await keyClient({ jwksUri: `${keyServerUrl}/missing.json` });
    expectInvalidClient(await introspectWith(await assertion(missing.clientId, key)), /jwks_uri could not be read: answered 404/);
  });

  it('registers dynamically with private_key_jwt (jwks or jwks_uri, one of them, public keys only)', async () => {
    const key = await keyPair('EdDSA');
    const register = async (body: Record<string, unknown>) => {
      const res = await fetch(`${t.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    const base = { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'private_key_jwt', scope: 'api' };
    const registered = await register({ ...base, jwks: { keys: [key.publicJwk] }, token_endpoint_auth_signing_alg: 'EdDSA' });
    expect(registered.status).toBe(201);
    expect(registered.body).not.toHaveProperty('client_secret');
    expect(registered.body).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [key.publicJwk] } });
    expect((await introspectWith(await assertion(registered.body.client_id, key))).status).toBe(200);

    const byUri = await register({ ...base, jwks_uri: `${keyServerUrl}/jwks.json` });
    expect(byUri.body).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: `${keyServerUrl}/jwks.json` });

    const privateJwk = await jose.exportJWK((await jose.generateKeyPair('ES256', { extractable: true })).privateKey);
    for (const [body, problem] of [
      [{ ...base }, /either by value \(jwks\) or by address \(jwks_uri\)/],
      [{ ...base, jwks: { keys: [key.publicJwk] }, jwks_uri: `${keyServerUrl}/jwks.json` }, /either by value/],
      [{ ...base, jwks: { keys: [privateJwk] } }, /private key/],
      [{ ...base, jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }, /RSA, EC or OKP/],
      [{ ...base, jwks: { keys: [] } }, /non-empty/],
      [{ ...base, jwks_uri: 'ftp://keys.example/jwks' }, /jwks_uri/],
      [{ ...base, jwks: { keys: [key.publicJwk] }, token_endpoint_auth_signing_alg: 'HS256' }, /token_endpoint_auth_signing_alg/],
    ] as const) {
      const refused = await register(body);
      expect([refused.status, refused.body]).toEqual([
        400,
        { error: 'invalid_client_metadata', error_description: expect.stringMatching(problem) },
      ]);
    }
  });
});
