import * as client from 'openid-client';
import jwt from 'jsonwebtoken';
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../src/config/config.module.js';
import { graphql } from './support/http.js';
import { approveInBrowser, authorizationRequest, discover, newUserAndApp, REDIRECT_URI } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('the authorization code flow with PKCE, driven by openid-client', () => {
  it.each(['post', 'basic'] as const)('signs a user in with client_secret_%s, validates the id_token and calls viewer', async (auth) => {
    const { user, app } = await newUserAndApp(t);
    // 1–2: the client holds its registration and makes a verifier; discovery tells it the endpoints.
    const config = await discover(t, app, auth);
    expect(config.serverMetadata().issuer).toBe(t.url);
    const { url, codeVerifier, state, nonce } = await authorizationRequest(config);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');

    // 3–4: the browser signs in, approves, and comes back with the code, state and iss.
    const callback = new URL(await approveInBrowser(t, url, user));
    expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
    expect(callback.searchParams.get('state')).toBe(state);
    expect(callback.searchParams.get('iss')).toBe(t.url);

    // 5: the code exchange; openid-client validates the id_token (signature via JWKS, iss, aud, nonce, exp).
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: codeVerifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe('openid profile email api');
    expect(tokens.access_token).toMatch(/^agora_oat_/);
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({
      iss: t.url,
      sub: user.id,
      aud: app.clientId,
      nonce,
      name: user.name,
      preferred_username: user.username,
      email: user.email,
    });
    expect(claims.exp - claims.iat).toBe(3600);
    expect(typeof claims.auth_time).toBe('number');

    // 6: the API with the access token.
    const res = await graphql(t.url, '{ viewer { id name } }', { bearer: tokens.access_token });
    expect(res.status).toBe(200);
    expect(res.body.data?.viewer).toEqual({ id: user.id, name: user.name });

    const userinfo = await client.fetchUserInfo(config, tokens.access_token, user.id);
    expect(userinfo).toMatchObject({ sub: user.id, name: user.name, email: user.email, preferred_username: user.username });
  });

  it('accepts a JSON body at the token endpoint', async () => {
    const { user, app } = await newUserAndApp(t);
    const config = await discover(t, app);
    const { url, codeVerifier } = await authorizationRequest(config, 'openid api');
    const code = new URL(await approveInBrowser(t, url, user)).searchParams.get('code')!;
    const res = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'authorization_code',
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uri: REDIRECT_URI,
        code,
        code_verifier: codeVerifier,
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'id_token', 'scope', 'token_type']);
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'openid api' });
  });

  it('omits the id_token when openid was not granted', async () => {
    const { user, app } = await newUserAndApp(t);
    const config = await discover(t, app);
    const { url, codeVerifier, state } = await authorizationRequest(config, 'api');
    const callback = new URL(await approveInBrowser(t, url, user));
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: state });
    expect(tokens.id_token).toBeUndefined();
    expect(tokens.scope).toBe('api');
  });

  it('remembers consent: a second authorization for the same scopes skips the consent page', async () => {
    const { user, app } = await newUserAndApp(t);
    const config = await discover(t, app);
    const { Browser } = await import('./support/browser.js');
    const browser = new Browser(t.url);
    await approveInBrowser(t, (await authorizationRequest(config)).url, user, browser);
    const again = await authorizationRequest(config);
    const res = await browser.get(again.url.pathname + again.url.search);
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get('location')!).searchParams.get('code')).toBeTruthy();
  });
});

describe('OpenID Connect discovery and keys', () => {
  it('publishes exactly what is supported', async () => {
    const res = await fetch(`${t.url}/.well-known/openid-configuration`);
    const doc = (await res.json()) as Record<string, unknown>;
    expect(doc).toMatchObject({
      issuer: t.url,
      authorization_endpoint: `${t.url}/oauth/authorize`,
      token_endpoint: `${t.url}/oauth/token`,
      userinfo_endpoint: `${t.url}/oauth/userinfo`,
      jwks_uri: `${t.url}/oauth/discovery/keys`,
      revocation_endpoint: `${t.url}/oauth/revoke`,
      introspection_endpoint: `${t.url}/oauth/introspect`,
      response_types_supported: ['code'],
      device_authorization_endpoint: `${t.url}/oauth/device_authorization`,
      grant_types_supported: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code', 'client_credentials'],
      code_challenge_methods_supported: ['S256'],
      prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
      id_token_signing_alg_values_supported: ['RS256', 'ES256', 'EdDSA'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
      authorization_response_iss_parameter_supported: true,
    });
  });

  it('publishes public keys only, one per algorithm, each with kid, use sig and its alg', async () => {
    const { keys } = (await (await fetch(`${t.url}/oauth/discovery/keys`)).json()) as { keys: Record<string, string>[] };
    const kid = expect.stringMatching(/^[A-Za-z0-9_-]{43}$/);
    expect(keys).toEqual(
      expect.arrayContaining([
        { kty: 'RSA', n: expect.any(String), e: 'AQAB', kid, use: 'sig', alg: 'RS256' },
        { kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid, use: 'sig', alg: 'ES256' },
        { kty: 'OKP', crv: 'Ed25519', x: expect.any(String), kid, use: 'sig', alg: 'EdDSA' },
      ]),
    );
    expect(keys).toHaveLength(3);
    for (const key of keys) expect(key).not.toHaveProperty('d');
  });

  it('keeps verifying an id_token signed before a key rotation, and signs new ones with the new key', async () => {
    const { user, app } = await newUserAndApp(t);
    const config = await discover(t, app);
    const first = await authorizationRequest(config);
    const before = await client.authorizationCodeGrant(config, new URL(await approveInBrowser(t, first.url, user)), {
      pkceCodeVerifier: first.codeVerifier,
      expectedState: first.state,
      expectedNonce: first.nonce,
    });
    const oldKid = (jwt.decode(before.id_token!, { complete: true })!.header as { kid: string }).kid;

    const { SigningKeysService } = await import('../src/oauth/keys/signing-keys.service.js');
    const [rotated] = await t.get(SigningKeysService).rotate(['RS256']);
    expect(rotated).toMatchObject({ alg: 'RS256', retired: oldKid });

    const { keys } = (await (await fetch(`${t.url}/oauth/discovery/keys`)).json()) as { keys: (JsonWebKey & { kid: string })[] };
    expect(keys.map((k) => k.kid)).toEqual(expect.arrayContaining([oldKid, rotated.kid]));
    const oldKey = createPublicKey({ key: keys.find((k) => k.kid === oldKid)!, format: 'jwk' });
    expect(jwt.verify(before.id_token!, oldKey, { algorithms: ['RS256'], audience: app.clientId, issuer: t.url })).toMatchObject({
      sub: user.id,
    });

    const second = await authorizationRequest(config);
    const after = await client.authorizationCodeGrant(config, new URL(await approveInBrowser(t, second.url, user)), {
      pkceCodeVerifier: second.codeVerifier,
      expectedState: second.state,
      expectedNonce: second.nonce,
    });
    expect((jwt.decode(after.id_token!, { complete: true })!.header as { kid: string }).kid).toBe(rotated.kid);

    // Once every token the old key signed has expired, it leaves JWKS.
    t.clock.advance(3600_000 + 6 * 60_000);
    const later = (await (await fetch(`${t.url}/oauth/discovery/keys`)).json()) as { keys: { kid: string; alg: string }[] };
    expect(later.keys.filter((k) => k.alg === 'RS256').map((k) => k.kid)).toEqual([rotated!.kid]);
  });

  it('signs with the new key on another instance once that instance reads the active key again, a minute later', async () => {
    const { SigningKeysService } = await import('../src/oauth/keys/signing-keys.service.js');
    type Keys = ConstructorParameters<typeof SigningKeysService>[0];
    // Another instance on the same database: the same service with a cache of its own.
    const dataSource = t.get(DataSource);
    const elsewhere = new SigningKeysService(
      dataSource.getRepository('SigningKeyEntity') as Keys,
      dataSource,
      t.clock,
      t.app.get(APP_CONFIG),
    );
    const before = (await elsewhere.activeKey()).kid;
    const [{ kid, retired }] = await t.get(SigningKeysService).rotate(['RS256']);
    expect(retired).toBe(before);
    // TestClock runs on from real time, which a slow rotation (an RSA key pair) spends: no boundary to the second.
    t.clock.advance(30_000);
    expect((await elsewhere.activeKey()).kid).toBe(before);
    t.clock.advance(30_000);
    expect((await elsewhere.activeKey()).kid).toBe(kid);
  });
});
