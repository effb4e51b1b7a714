import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { generateKeyPairSync } from 'node:crypto';
import * as client from 'openid-client';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { SigningKeysService } from '../src/oauth/keys/signing-keys.service.js';
import type { User } from '../src/users/user.model.js';
import { Browser } from './support/browser.js';
import { createUser } from './support/fixtures.js';
import { approveInBrowser, authorizationRequest, REDIRECT_URI } from './support/oauth.js';
import { runCli } from './support/processes.js';
import { startTestApp, TestApp } from './support/test-app.js';

const LOGOUT_URI = 'http://localhost:4000/signed-out';
type Alg = 'RS256' | 'ES256' | 'EdDSA';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ OAUTH_DYNAMIC_REGISTRATION: 'true', OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK: '1000' });
});
afterAll(() => t.close());

interface Jwk {
  kid: string;
  alg: string;
  kty: string;
  crv?: string;
}

async function jwks(): Promise<Jwk[]> {
  return ((await (await fetch(`${t.url}/oauth/discovery/keys`)).json()) as { keys: Jwk[] }).keys;
}

/**
 * A client registered through dynamic registration (RFC 7591) with `metadata`, then claimed by a user so
 * that the authorization flow redirects to it; openid-client is told its id_token_signed_response_alg.
 */
async function registeredClient(metadata: Record<string, unknown>) {
  const res = await fetch(`${t.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Signing test',
      redirect_uris: [REDIRECT_URI],
      post_logout_redirect_uris: [LOGOUT_URI],
      scope: 'openid profile api',
      ...metadata,
    }),
  });
  expect(res.status).toBe(201);
  const registered = (await res.json()) as Record<string, string>;
  const owner = await createUser(t);
  const applications = t.get(ApplicationsService);
  await applications.claim((await applications.findByClientId(registered.client_id!))!.id, owner.id);
  const config = await client.discovery(
    new URL(t.url),
    registered.client_id!,
    { client_secret: registered.client_secret!, id_token_signed_response_alg: registered.id_token_signed_response_alg },
    client.ClientSecretPost(registered.client_secret!),
    { execute: [client.allowInsecureRequests] },
  );
  return { registered, config };
}

/** Signs `user` in through the client and returns the tokens, the id_token validated by openid-client against the JWKS. */
async function signIn(config: client.Configuration, user: User, browser = new Browser(t.url)) {
  const { url, codeVerifier, state, nonce } = await authorizationRequest(config, 'openid profile');
  const callback = new URL(await approveInBrowser(t, url, user, browser));
  return client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: codeVerifier,
    expectedState: state,
    expectedNonce: nonce,
    idTokenExpected: true,
  });
}

describe('id_tokens signed with the client’s id_token_signed_response_alg', () => {
  it('lists RS256, ES256 and EdDSA in discovery, and publishes one key of each with its kty and crv', async () => {
    const doc = (await (await fetch(`${t.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(doc.id_token_signing_alg_values_supported).toEqual(['RS256', 'ES256', 'EdDSA']);
    const keys = await jwks();
    expect(keys.map((k) => [k.alg, k.kty, k.crv ?? null]).sort()).toEqual([
      ['ES256', 'EC', 'P-256'],
      ['EdDSA', 'OKP', 'Ed25519'],
      ['RS256', 'RSA', null],
    ]);
  });

  it.each(['ES256', 'EdDSA', 'RS256'] as Alg[])(
    'issues %s id_tokens that openid-client and jose validate against the JWKS',
    async (alg) => {
      const { registered, config } = await registeredClient({ id_token_signed_response_alg: alg });
      expect(registered.id_token_signed_response_alg).toBe(alg);
      const user = await createUser(t);
      const tokens = await signIn(config, user);
      expect(tokens.claims()).toMatchObject({ iss: t.url, sub: user.id, aud: registered.client_id });
      const header = decodeProtectedHeader(tokens.id_token!);
      expect(header.alg).toBe(alg);
      expect((await jwks()).find((k) => k.kid === header.kid)?.alg).toBe(alg);
      const { payload } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${t.url}/oauth/discovery/keys`)), {
        issuer: t.url,
        audience: registered.client_id,
        algorithms: [alg],
        currentDate: t.clock.now(),
      });
      expect(payload.sub).toBe(user.id);
    },
  );

  it('signs RS256 for a client that did not choose, and says so in the registration response', async () => {
    const { registered, config } = await registeredClient({});
    expect(registered.id_token_signed_response_alg).toBe('RS256');
    expect(registered.access_token_format).toBe('opaque');
    const tokens = await signIn(config, await createUser(t));
    expect(decodeProtectedHeader(tokens.id_token!).alg).toBe('RS256');
  });

  it.each(['ES256', 'EdDSA'] as Alg[])('accepts a %s id_token as the logout hint, and refuses a forged one', async (alg) => {
    const { registered, config } = await registeredClient({ id_token_signed_response_alg: alg });
    const user = await createUser(t);
    const browser = new Browser(t.url);
    const { id_token: idToken } = await signIn(config, user, browser);
    const logout = (hint: string) =>
      browser.get(`/oauth/logout?${new URLSearchParams({ id_token_hint: hint, post_logout_redirect_uri: LOGOUT_URI }).toString()}`);

    const { kid } = decodeProtectedHeader(idToken!);
    const claims = JSON.parse(Buffer.from(idToken!.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    const other = alg === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519');
    const forged = await new SignJWT(claims).setProtectedHeader({ alg, kid: kid! }).sign(other.privateKey);
    const refused = await logout(forged);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/not an ID token issued by this server/);
    // Our kid, another algorithm in the header: refused, never verified with the wrong algorithm.
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    expect((await logout(await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: kid! }).sign(rsa.privateKey))).status).toBe(400);

    const res = await logout(idToken!);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(LOGOUT_URI);
    expect(registered.client_id).toBeTruthy();
  });

  it('refuses an unsupported or malformed id_token_signed_response_alg with invalid_client_metadata', async () => {
    for (const alg of ['HS256', 'none', 'PS256', 'es256', '', 42, ['ES256']]) {
      const res = await fetch(`${t.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT_URI], id_token_signed_response_alg: alg }),
      });
      const body = (await res.json()) as { error: string; error_description: string };
      expect([alg, res.status, body.error]).toEqual([alg, 400, 'invalid_client_metadata']);
      expect(body.error_description).toMatch(/id_token_signed_response_alg/);
    }
  });

  it('keeps the choice in the dashboard’s applications and refuses an unknown one there with a field error', async () => {
    const owner = await createUser(t);
    const applications = t.get(ApplicationsService);
    const { application } = await applications.create(owner.id, {
      name: 'Dashboard EdDSA',
      redirectUris: [REDIRECT_URI],
      scopes: ['openid'],
      idTokenSignedResponseAlg: 'EdDSA',
    });
    expect(application.idTokenSignedResponseAlg).toBe('EdDSA');
    // An update that does not mention it keeps it.
    const updated = await applications.update(application.id, owner.id, {
      name: 'Renamed',
      redirectUris: [REDIRECT_URI],
      scopes: ['openid'],
    });
    expect(updated.idTokenSignedResponseAlg).toBe('EdDSA');
    await expect(
      applications.update(application.id, owner.id, {
        name: 'Renamed',
        redirectUris: [REDIRECT_URI],
        scopes: ['openid'],
        idTokenSignedResponseAlg: 'HS256',
      }),
    ).rejects.toMatchObject({ code: 'INVALID_SIGNING_ALG', field: 'idTokenSignedResponseAlg' });
  });
});

describe('key rotation covers every algorithm', () => {
  it('rotates all three keys; old and new of each stay in the JWKS, and new id_tokens use the new key', async () => {
    const before = await jwks();
    const rotated = await t.get(SigningKeysService).rotate();
    expect(rotated.map((r) => r.alg)).toEqual(['RS256', 'ES256', 'EdDSA']);
    const after = await jwks();
    for (const { alg, kid, retired } of rotated) {
      expect(retired).not.toBeNull();
      expect(before.filter((k) => k.alg === alg).map((k) => k.kid)).toContain(retired);
      expect(after.filter((k) => k.alg === alg).map((k) => k.kid)).toEqual(expect.arrayContaining([kid, retired]));
    }
    const { config } = await registeredClient({ id_token_signed_response_alg: 'EdDSA' });
    const tokens = await signIn(config, await createUser(t));
    expect(decodeProtectedHeader(tokens.id_token!).kid).toBe(rotated.find((r) => r.alg === 'EdDSA')!.kid);
  });

  it('rotates one algorithm with keys:rotate --alg, and refuses an unknown one', async () => {
    const active = async () =>
      Object.fromEntries(
        await Promise.all(
          (['RS256', 'ES256', 'EdDSA'] as Alg[]).map(async (alg) => [alg, (await t.get(SigningKeysService).activeKey(alg)).kid]),
        ),
      );
    const before = await active();
    const result = await runCli(t.databaseEnv, 'keys:rotate', '--alg', 'ES256');
    expect(result.stderr).toBe('');
    expect(result.json).toEqual({ rotated: [{ alg: 'ES256', kid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), retired: before.ES256 }] });
    const { keys } = (await (await fetch(`${t.url}/oauth/discovery/keys`)).json()) as { keys: Jwk[] };
    expect(keys.filter((k) => k.alg === 'ES256').map((k) => k.kid)).toEqual(
      expect.arrayContaining([before.ES256, result.json.rotated[0].kid]),
    );
    // The other instance (this server) signs with it once it reads the active key again, within a minute.
    t.clock.advance(61_000);
    const now = await active();
    expect(now).toEqual({ RS256: before.RS256, ES256: result.json.rotated[0].kid, EdDSA: before.EdDSA });

    const unknown = await runCli(t.databaseEnv, 'keys:rotate', '--alg', 'HS256');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--alg: must be "RS256" or "ES256" or "EdDSA", not "HS256"/);
  });
});
