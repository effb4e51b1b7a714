import { createHash, randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import { ApplicationsService } from '../../src/oauth/clients/applications.service.js';
import { AuthorizationCodesService } from '../../src/oauth/authorize/authorization-codes.service.js';
import { TEST_PASSWORD, createUser } from './fixtures.js';
import { Browser, formFields, signIn } from './browser.js';
import type { TestApp } from './test-app.js';
import type { User } from '../../src/users/user.model.js';

export const REDIRECT_URI = 'http://localhost:4000/callback';

/**
 * The error of a token request that redeems a code that does not exist: `invalid_grant` from a client
 * the server accepts, `invalid_client` from one it refuses (e.g. a rotated secret).
 */
export async function unknownCodeError(baseUrl: string, clientId: string, clientSecret: string): Promise<string> {
  const res = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: 'unknown-code',
      redirect_uri: REDIRECT_URI,
      code_verifier: 'a'.repeat(43),
      client_id: clientId,
      client_secret: clientSecret,
    }),
  });
  return ((await res.json()) as { error: string }).error;
}

/** A code for `app` as the authorization endpoint issues it after `userId`'s consent, and its PKCE verifier. */
export async function issueCode(
  t: TestApp,
  app: RegisteredApp,
  userId: string,
  scopes = ['api'],
): Promise<{ code: string; verifier: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const application = (await t.get(ApplicationsService).findByClientId(app.clientId))!;
  const code = await t.get(AuthorizationCodesService).issue(
    {
      application,
      redirectUri: REDIRECT_URI,
      scopes,
      codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
      nonce: 'n-1',
    },
    userId,
    { authTime: t.clock.now(), amr: ['pwd'] },
  );
  return { code, verifier };
}

export interface RegisteredApp {
  clientId: string;
  clientSecret: string;
  applicationId: string;
}

export async function registerApp(
  t: TestApp,
  ownerId: string,
  scopes = ['openid', 'profile', 'email', 'api', 'read_api'],
): Promise<RegisteredApp> {
  const { application, clientSecret } = await t
    .get(ApplicationsService)
    .create(ownerId, { name: 'Test Client', redirectUris: [REDIRECT_URI], scopes });
  return { clientId: application.clientId, clientSecret: clientSecret!, applicationId: application.id };
}

export interface RegisteredPublicApp {
  clientId: string;
  applicationId: string;
}

/** A public client (no secret, PKCE alone), e.g. a single-page, native or command-line app. */
export async function registerPublicApp(
  t: TestApp,
  ownerId: string | null,
  options: { redirectUris?: string[]; scopes?: string[]; postLogoutRedirectUris?: string[] } = {},
): Promise<RegisteredPublicApp> {
  const { application } = await t.get(ApplicationsService).create(
    ownerId,
    {
      name: 'Public Test Client',
      redirectUris: options.redirectUris ?? [REDIRECT_URI],
      scopes: options.scopes ?? ['openid', 'profile', 'email', 'api', 'read_api'],
      postLogoutRedirectUris: options.postLogoutRedirectUris,
    },
    'public',
  );
  return { clientId: application.clientId, applicationId: application.id };
}

/** openid-client's configuration for a public client: token_endpoint_auth_method none. */
export async function discoverPublic(t: TestApp, clientId: string): Promise<client.Configuration> {
  return client.discovery(new URL(t.url), clientId, undefined, client.None(), { execute: [client.allowInsecureRequests] });
}

export async function discover(t: TestApp, app: RegisteredApp, auth: 'post' | 'basic' = 'post'): Promise<client.Configuration> {
  const method = auth === 'post' ? client.ClientSecretPost(app.clientSecret) : client.ClientSecretBasic(app.clientSecret);
  return client.discovery(new URL(t.url), app.clientId, undefined, method, { execute: [client.allowInsecureRequests] });
}

/** An authorization request built by openid-client with PKCE, state and nonce. */
export async function authorizationRequest(config: client.Configuration, scope = 'openid profile email api') {
  const codeVerifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url, codeVerifier, state, nonce };
}

/** Runs sign-in and consent in a browser-like client and returns the callback URL with the code. */
export async function approveInBrowser(t: TestApp, authorizeUrl: URL, user: User, browser = new Browser(t.url)): Promise<string> {
  const first = await browser.get(authorizeUrl.pathname + authorizeUrl.search);
  let consent: Response;
  if (first.status === 302 && first.headers.get('location')!.startsWith('/sign-in')) {
    const returnTo = new URL(first.headers.get('location')!, t.url).searchParams.get('return_to')!;
    const signedIn = await signIn(browser, user.username, TEST_PASSWORD, returnTo);
    const followed = await browser.follow(signedIn);
    if (followed.external) return followed.external; // consent remembered
    consent = followed.res;
  } else {
    const followed = await browser.follow(first);
    if (followed.external) return followed.external;
    consent = followed.res;
  }
  if (consent.status !== 200) throw new Error(`expected the consent page, got ${consent.status}: ${await consent.text()}`);
  const fields = formFields(await consent.text());
  const decided = await browser.post('/oauth/authorize', { ...fields, decision: 'approve' });
  if (decided.status !== 302) throw new Error(`expected a redirect after consent, got ${decided.status}: ${await decided.text()}`);
  return decided.headers.get('location')!;
}

export async function newUserAndApp(t: TestApp): Promise<{ user: User; app: RegisteredApp }> {
  const user = await createUser(t);
  const owner = await createUser(t);
  return { user, app: await registerApp(t, owner.id) };
}
