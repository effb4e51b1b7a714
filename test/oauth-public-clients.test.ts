import * as client from 'openid-client';
import { graphql } from './support/http.js';
import { createUser } from './support/fixtures.js';
import { Browser } from './support/browser.js';
import { approveInBrowser, discoverPublic, registerApp, registerPublicApp, unknownCodeError } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** openid-client builds the request (PKCE S256, state, nonce) for a redirect URI of the test's choosing. */
async function request(config: client.Configuration, redirectUri: string, scope = 'openid profile api') {
  const codeVerifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url, codeVerifier, state, nonce };
}

function tokenRequest(body: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(`${t.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(body),
  });
}

describe('public clients (token_endpoint_auth_method none, PKCE alone)', () => {
  it('signs a user in with openid-client and no secret, then calls the API', async () => {
    const owner = await createUser(t);
    const user = await createUser(t);
    const app = await registerPublicApp(t, owner.id);
    const config = await discoverPublic(t, app.clientId);
    expect(config.serverMetadata().token_endpoint_auth_methods_supported).toContain('none');
    const { url, codeVerifier, state, nonce } = await request(config, 'http://localhost:4000/callback');
    const callback = new URL(await approveInBrowser(t, url, user));
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: codeVerifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.claims()).toMatchObject({ sub: user.id, aud: app.clientId });
    const res = await graphql(t.url, '{ viewer { id } }', { bearer: tokens.access_token });
    expect(res.body.data?.viewer).toEqual({ id: user.id });
  });

  it('matches a loopback IP redirect URI on any port (RFC 8252 §7.3), nothing else about it', async () => {
    const owner = await createUser(t);
    const user = await createUser(t);
    const app = await registerPublicApp(t, owner.id, { redirectUris: ['http://127.0.0.1/callback', 'http://[::1]/cb'] });
    const config = await discoverPublic(t, app.clientId);
    // The port the operating system gave the app's listener, different every run.
    const port = 49152 + Math.floor(Math.random() * 16000);
    for (const redirectUri of [`http://127.0.0.1:${port}/callback`, `http://[::1]:${port}/cb`]) {
      const { url, codeVerifier, state } = await request(config, redirectUri, 'api');
      const callback = new URL(await approveInBrowser(t, url, user));
      expect(callback.origin + callback.pathname).toBe(redirectUri);
      const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: state });
      expect(tokens.scope).toBe('api');
    }
    // Another path, host or scheme is not the registered URI: the error page, never a redirect.
    const browser = new Browser(t.url);
    for (const redirectUri of [
      `http://127.0.0.1:${port}/other`,
      `http://localhost:${port}/callback`,
      `https://127.0.0.1:${port}/callback`,
    ]) {
      const { url } = await request(config, redirectUri, 'api');
      const res = await browser.get(url.pathname + url.search);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('The redirect_uri is not registered for this application.');
    }
  });

  it('does not extend any-port matching to confidential clients', async () => {
    const owner = await createUser(t);
    const app = await registerApp(t, owner.id);
    await t.get(ApplicationsService).update(app.applicationId, owner.id, {
      name: 'Loopback web app',
      redirectUris: ['http://127.0.0.1/callback'],
      scopes: ['api'],
    });
    const res = await new Browser(t.url).get(
      `/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: 'http://127.0.0.1:5000/callback',
        scope: 'api',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      })}`,
    );
    expect(res.status).toBe(400);
  });

  it('accepts a private-use URI scheme for a native app, and only for a public client', async () => {
    const owner = await createUser(t);
    const user = await createUser(t);
    const app = await registerPublicApp(t, owner.id, { redirectUris: ['com.example.agora:/oauth2redirect'] });
    const config = await discoverPublic(t, app.clientId);
    const { url } = await request(config, 'com.example.agora:/oauth2redirect', 'api');
    const callback = await approveInBrowser(t, url, user);
    expect(callback).toMatch(/^com\.example\.agora:\/oauth2redirect\?code=/);

    const applications = t.get(ApplicationsService);
    await expect(
      applications.create(owner.id, { name: 'Web', redirectUris: ['com.example.agora:/oauth2redirect'], scopes: ['api'] }),
    ).rejects.toMatchObject({ code: 'INVALID_REDIRECT_URI' });
    for (const bad of ['myapp:/callback', 'javascript:alert(1)', 'com.example.agora://host/path', 'http://example.com/callback']) {
      await expect(applications.create(owner.id, { name: 'Native', redirectUris: [bad], scopes: ['api'] }, 'public')).rejects.toMatchObject(
        {
          code: 'INVALID_REDIRECT_URI',
        },
      );
    }
  });

  it('tells each kind of client what it got wrong at the token endpoint', async () => {
    const owner = await createUser(t);
    const publicApp = await registerPublicApp(t, owner.id);
    const confidential = await registerApp(t, owner.id);
    const code = {
      grant_type: 'authorization_code',
      code: 'unknown',
      redirect_uri: 'http://localhost:4000/callback',
      code_verifier: 'a'.repeat(43),
    };

    // A public client identified by its id alone reaches the grant checks.
    const asPublic = await tokenRequest({ ...code, client_id: publicApp.clientId });
    expect(asPublic.status).toBe(400);
    expect(((await asPublic.json()) as { error: string }).error).toBe('invalid_grant');

    // A public client has no secret: sending one is refused, whatever it is.
    expect(await unknownCodeError(t.url, publicApp.clientId, 'agora_cs_anything')).toBe('invalid_client');
    const basic = await tokenRequest(code, { authorization: `Basic ${Buffer.from(`${publicApp.clientId}:x`).toString('base64')}` });
    expect(basic.status).toBe(401);
    expect(((await basic.json()) as { error_description: string }).error_description).toMatch(/public client/);

    // A confidential client without its secret is not let in as a public one.
    const noSecret = await tokenRequest({ ...code, client_id: confidential.clientId });
    expect(noSecret.status).toBe(401);
    expect(await noSecret.json()).toMatchObject({ error: 'invalid_client', error_description: expect.stringMatching(/confidential/) });
    const unknown = await tokenRequest({ ...code, client_id: 'f'.repeat(40) });
    expect(unknown.status).toBe(401);
  });

  it('has no secret to show or rotate', async () => {
    const owner = await createUser(t);
    const { clientSecret } = await t
      .get(ApplicationsService)
      .create(owner.id, { name: 'SPA', redirectUris: ['https://spa.example/callback'], scopes: ['api'] }, 'public');
    expect(clientSecret).toBeUndefined();
    const app = await registerPublicApp(t, owner.id);
    await expect(t.get(ApplicationsService).rotateSecret(app.applicationId)).rejects.toMatchObject({ code: 'PUBLIC_CLIENT' });
  });
});

describe('repeat authorization of a native app (RFC 8252 §8.6)', () => {
  it('asks the user every time for a loopback or private-use redirect, not for an https one', async () => {
    const owner = await createUser(t);
    const user = await createUser(t);
    const app = await registerPublicApp(t, owner.id, { redirectUris: ['http://127.0.0.1/callback', 'https://spa.example/callback'] });
    const config = await discoverPublic(t, app.clientId);
    const browser = new Browser(t.url);
    // The first approval of each is remembered as usual.
    for (const redirectUri of ['http://127.0.0.1:50123/callback', 'https://spa.example/callback']) {
      const { url } = await request(config, redirectUri, 'api');
      await approveInBrowser(t, url, user, browser);
    }
    // Another program on the device, with a port and a PKCE pair of its own, gets the consent page again.
    const again = await request(config, 'http://127.0.0.1:50999/callback', 'api');
    const asked = await browser.get(again.url.pathname + again.url.search);
    expect(asked.status).toBe(200);
    expect(await asked.text()).toContain('decision');
    const silent = await request(config, 'http://127.0.0.1:50999/callback', 'api');
    silent.url.searchParams.set('prompt', 'none');
    const refused = await browser.get(silent.url.pathname + silent.url.search);
    expect(refused.status).toBe(302);
    expect(new URL(refused.headers.get('location')!).searchParams.get('error')).toBe('consent_required');
    // A web origin's https redirect is the app's own: the remembered approval covers it.
    const web = await request(config, 'https://spa.example/callback', 'api');
    const remembered = await browser.get(web.url.pathname + web.url.search);
    expect(remembered.status).toBe(302);
    expect(remembered.headers.get('location')).toMatch(/^https:\/\/spa\.example\/callback\?code=/);
  });
});
