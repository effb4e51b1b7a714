import { createPublicKey, JsonWebKey, verify } from 'node:crypto';
import * as client from 'openid-client';
import { SIGN_IN_LIMITS } from '../../src/sessions/attempt-throttle.js';
import { Browser, formFields, signIn } from '../support/browser.js';
import { TEST_PASSWORD } from '../support/fixtures.js';
import { graphql } from '../support/http.js';
import { authorizationRequest, REDIRECT_URI } from '../support/oauth.js';
import { cli, createFleetUser, Fleet, Instance, scratchDatabase, ScratchDatabase, startFleet } from './fleet.js';

// Three instances behind one public address (BASE_URL, here A's), as a load balancer would spread a
// browser's and a client's requests over them: each step of a flow goes to another instance.
let db: ScratchDatabase;
let fleet: Fleet;
let a: Instance;
let b: Instance;
let c: Instance;
let app: { clientId: string; clientSecret: string };

let users = 0;
async function newUser(): Promise<string> {
  const username = `fleet${process.pid}x${++users}`;
  await createFleetUser(fleet.env, username);
  return username;
}

beforeAll(async () => {
  db = await scratchDatabase();
  fleet = await startFleet(db.url, 3);
  [a, b, c] = fleet.instances as [Instance, Instance, Instance];
  const owner = await newUser();
  app = (await cli(fleet.env, 'apps:create', '--user', owner, '--name', 'Fleet client', '--redirect-uri', REDIRECT_URI)) as typeof app;
});

afterAll(async () => {
  if (fleet) expect(await fleet.stop()).toEqual([0, 0, 0]);
  await db?.drop();
});

/** The browser of one person, its requests sent to `instance` (cookies shared wherever it goes next). */
const browserAt = (instance: Instance) => new Browser(instance.url, fleet.site);

/** A relying party that redeems codes at `token`'s endpoint and takes the keys from `keys`' JWKS. */
async function relyingParty(token: Instance, keys: Instance): Promise<client.Configuration> {
  const metadata = (await (await fetch(`${fleet.site}/.well-known/openid-configuration`)).json()) as client.ServerMetadata;
  const config = new client.Configuration(
    { ...metadata, token_endpoint: `${token.url}/oauth/token`, jwks_uri: `${keys.url}/oauth/discovery/keys` },
    app.clientId,
    undefined,
    client.ClientSecretPost(app.clientSecret),
  );
  client.allowInsecureRequests(config);
  // Verify the id_token's signature with the JWKS too, not only its claims.
  client.enableNonRepudiationChecks(config);
  return config;
}

/** Signs in with the browser where it is, then follows to consent and approves with `consentOn`; the callback URL. */
async function approve(username: string, signInOn: Browser, consentOn: Browser, authorizeUrl: URL, approveOn = consentOn): Promise<URL> {
  const first = await signInOn.get(authorizeUrl.pathname + authorizeUrl.search);
  expect(first.status).toBe(302);
  const returnTo = new URL(first.headers.get('location')!, fleet.site).searchParams.get('return_to')!;
  const signedIn = await signIn(signInOn, username, TEST_PASSWORD, returnTo);
  expect(signedIn.status).toBe(303);
  const consent = await consentOn.follow(signedIn);
  expect(consent.res.status).toBe(200);
  const decided = await approveOn.post('/oauth/authorize', { ...formFields(await consent.res.text()), decision: 'approve' });
  expect(decided.status).toBe(302);
  return new URL(decided.headers.get('location')!);
}

async function redeem(config: client.Configuration, request: Awaited<ReturnType<typeof authorizationRequest>>, callback: URL) {
  return client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: request.codeVerifier,
    expectedState: request.state,
    expectedNonce: request.nonce,
  });
}

const viewer = async (instance: Instance, credentials: { bearer?: string; privateToken?: string }) => {
  const res = await graphql(instance.url, '{ viewer { username } }', credentials);
  return { status: res.status, username: res.body?.data?.viewer?.username as string | undefined };
};

const jwksKids = async (instance: Instance): Promise<string[]> =>
  ((await (await fetch(`${instance.url}/oauth/discovery/keys`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);

describe('OAuth across instances', () => {
  it('authorizes on A, redeems the code on B and calls the API on C', async () => {
    const username = await newUser();
    const config = await relyingParty(b, b);
    const request = await authorizationRequest(config);
    const browser = browserAt(a);
    const callback = await approve(username, browser, browser, request.url);

    const tokens = await redeem(config, request, callback);
    expect(tokens.claims()).toMatchObject({ iss: fleet.site, aud: app.clientId, preferred_username: username });
    expect(await viewer(c, { bearer: tokens.access_token })).toEqual({ status: 200, username });
  });

  it('signs in on A, shows consent on B, takes the approval on C, redeems on A and answers UserInfo on B', async () => {
    const username = await newUser();
    const browser = browserAt(a);
    const request = await authorizationRequest(await relyingParty(a, a));
    const callback = await approve(username, browser, browser.at(b.url), request.url, browser.at(c.url));

    const tokens = await redeem(await relyingParty(a, a), request, callback);
    const userinfo = await fetch(`${b.url}/oauth/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(userinfo.status).toBe(200);
    expect(await userinfo.json()).toMatchObject({ preferred_username: username });
  });
});

describe('personal tokens across instances', () => {
  it('refuses a token on B and C on the first request after its revocation on A answered, though both had it cached', async () => {
    const username = await newUser();
    const { id, token } = (await cli(fleet.env, 'tokens:create', '--user', username, '--name', 'fleet')) as { id: string; token: string };
    for (const instance of [b, c]) {
      expect(await viewer(instance, { privateToken: token })).toEqual({ status: 200, username });
      expect(await viewer(instance, { privateToken: token })).toEqual({ status: 200, username }); // from the cache now
    }

    const browser = browserAt(a);
    expect((await signIn(browser, username, TEST_PASSWORD)).status).toBe(303);
    const confirm = await browser.get(`/account/tokens/${id}/revoke`);
    const started = performance.now();
    const revoked = await browser.post(`/account/tokens/${id}/revoke`, formFields(await confirm.text()));
    const waited = performance.now() - started;
    expect(revoked.status).toBe(303);

    for (const instance of [b, c, a]) expect((await viewer(instance, { privateToken: token })).status).toBe(401);
    // The revoke waited for B's and C's acknowledgements, well inside the 2 s bound (docs/operations.md).
    expect(waited).toBeLessThan(2_000);
  });
});

describe('sign-in throttles across instances', () => {
  it(`counts failures on every instance against one account: after ${SIGN_IN_LIMITS.account}, spread over A and B, C refuses even the right password`, async () => {
    const username = await newUser();
    for (let n = 0; n < SIGN_IN_LIMITS.account; n++) {
      const failed = await signIn(browserAt(n % 2 === 0 ? a : b), username, `wrong-guess-${n}`);
      expect(failed.status).toBe(401);
    }
    const locked = await signIn(browserAt(c), username, TEST_PASSWORD);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('signing-key rotation across instances', () => {
  it('publishes the new key on every instance at once, and an id_token from B verifies with the keys C publishes', async () => {
    const before = await jwksKids(a);
    const { rotated } = (await cli(fleet.env, 'keys:rotate', '--alg', 'RS256')) as {
      rotated: { alg: string; kid: string; retired: string }[];
    };
    expect(rotated.map((r) => r.alg)).toEqual(['RS256']);
    const { kid, retired } = rotated[0]!;
    expect(before).toContain(retired);
    for (const instance of fleet.instances) {
      const kids = await jwksKids(instance);
      expect(kids).toContain(kid);
      expect(kids).toContain(retired); // still published while tokens it signed live
    }

    // B may sign with the old key for up to a minute (it re-reads the active key every minute);
    // either way C's JWKS verifies it.
    const username = await newUser();
    const config = await relyingParty(b, c);
    const request = await authorizationRequest(config);
    const browser = browserAt(b);
    const tokens = await redeem(config, request, await approve(username, browser, browser, request.url));
    const idToken = tokens.id_token!;
    const [header, payload, signature] = idToken.split('.') as [string, string, string];
    const { kid: signedWith } = JSON.parse(Buffer.from(header, 'base64url').toString()) as { kid: string };
    const { keys } = (await (await fetch(`${c.url}/oauth/discovery/keys`)).json()) as { keys: (JsonWebKey & { kid: string })[] };
    const jwk = keys.find((k) => k.kid === signedWith);
    expect(jwk).toBeDefined();
    const key = createPublicKey({ key: jwk!, format: 'jwk' });
    expect(verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, 'base64url'))).toBe(true);
  });
});
