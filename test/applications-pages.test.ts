import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { approveInBrowser, authorizationRequest, discover } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';
import * as client from 'openid-client';
import type { User } from '../src/users/user.model.js';

let t: TestApp;
let developer: User;
let browser: Browser;
beforeAll(async () => {
  t = await startTestApp();
  developer = await createUser(t, { name: 'Dev Eloper' });
  browser = new Browser(t.url);
  await signIn(browser, developer.username, TEST_PASSWORD);
});
afterAll(() => t.close());

/** Posts the registration form (repeated `scopes`). */
async function register(values: { name: string; redirect_uris: string; scopes: string[] }): Promise<Response> {
  const { _csrf } = formFields(await (await browser.get('/applications')).text());
  const body = new URLSearchParams({ _csrf: _csrf!, name: values.name, redirect_uris: values.redirect_uris });
  for (const s of values.scopes) body.append('scopes', s);
  return fetch(`${t.url}/applications`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: `agora_session=${browser.cookie('agora_session')}; agora_csrf=${browser.cookie('agora_csrf')}`,
    },
    body: body.toString(),
  });
}

const secretOf = (page: string) => /<code id="client-secret" class="secret">(agora_ocs_[0-9A-Za-z]+)<\/code\s*>/.exec(page)?.[1];
const clientIdOf = (page: string) => /<code id="client-id">([^<]+)<\/code>/.exec(page)?.[1];

describe('applications pages', () => {
  it('register an application and show its ID, its secret once, and the endpoint URLs', async () => {
    const res = await register({
      name: 'Ticket Scanner',
      redirect_uris: 'http://localhost:4000/callback\nhttps://scanner.example.com/cb',
      scopes: ['openid', 'api'],
    });
    expect(res.status).toBe(201);
    const page = await res.text();
    expect(secretOf(page)).toBeDefined();
    expect(clientIdOf(page)).toBeDefined();
    expect(page).toContain('Copy it now: it will not be shown again.');
    for (const url of ['/oauth/authorize', '/oauth/token', '/.well-known/openid-configuration']) expect(page).toContain(`${t.url}${url}`);
    const list = await (await browser.get('/applications')).text();
    expect(list).toContain('Ticket Scanner');
    expect(list).not.toContain(secretOf(page)!);
  });

  it.each([
    [{ name: '', redirect_uris: 'https://a.example/cb', scopes: ['api'] }, 'app-name-error', 'Name must be 1 to 100 characters'],
    [{ name: 'x', redirect_uris: 'http://evil.example/cb', scopes: ['api'] }, 'redirect-uris-error', 'Redirect URIs must use https'],
    [{ name: 'x', redirect_uris: '', scopes: ['api'] }, 'redirect-uris-error', 'Give between 1 and 10 redirect URIs'],
    [{ name: 'x', redirect_uris: 'https://a.example/cb', scopes: [] }, 'scopes-error', 'Choose at least one scope'],
  ])('answer %j with 422 and the message beside the field', async (values, id, message) => {
    const res = await register(values);
    expect(res.status).toBe(422);
    expect(await res.text()).toContain(`<p class="field-error" id="${id}" role="alert">${message}`);
  });

  it('regenerate the secret: the old one stops working, the new one works', async () => {
    const created = await (
      await register({ name: 'Rotator', redirect_uris: 'http://localhost:4000/callback', scopes: ['openid', 'api'] })
    ).text();
    const clientId = clientIdOf(created)!;
    const oldSecret = secretOf(created)!;
    const id = /action="\/applications\/([0-9a-f-]{36})\/secret"/.exec(created)![1]!;
    const detail = await (await browser.get(`/applications/${id}`)).text();
    expect(detail).not.toContain(oldSecret);
    const rotated = await (await browser.post(`/applications/${id}/secret`, formFields(detail))).text();
    const newSecret = secretOf(rotated)!;
    expect(newSecret).not.toBe(oldSecret);
    const introspect = (secret: string) =>
      fetch(`${t.url}/oauth/introspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: clientId, client_secret: secret, token: 'x' }).toString(),
      });
    expect((await introspect(oldSecret)).status).toBe(401);
    expect((await introspect(newSecret)).status).toBe(200);
  });

  it("never show or change another developer's application", async () => {
    const created = await (await register({ name: 'Mine', redirect_uris: 'http://localhost:4000/callback', scopes: ['api'] })).text();
    const id = /action="\/applications\/([0-9a-f-]{36})\/secret"/.exec(created)![1]!;
    const stranger = new Browser(t.url);
    await signIn(stranger, (await createUser(t)).username, TEST_PASSWORD);
    const res = await stranger.get(`/applications/${id}`);
    expect(res.status).toBe(303);
    const page = await (await stranger.get('/applications')).text();
    const del = await stranger.post(`/applications/${id}/delete`, formFields(page));
    expect(del.status).toBe(303);
    expect((await browser.get(`/applications/${id}`)).status).toBe(200);
  });
});

describe('authorized applications page', () => {
  it('lists an approved application and revokes its access: the token stops working', async () => {
    const created = await (
      await register({ name: 'Calendar Sync', redirect_uris: 'http://localhost:4000/callback', scopes: ['openid', 'api'] })
    ).text();
    const app = { clientId: clientIdOf(created)!, clientSecret: secretOf(created)!, applicationId: '' };
    const config = await discover(t, app);
    const user = await createUser(t);
    const request = await authorizationRequest(config, 'openid api');
    const userBrowser = new Browser(t.url);
    const callback = new URL(await approveInBrowser(t, request.url, user, userBrowser));
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: request.codeVerifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
    });
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: tokens.access_token })).status).toBe(200);

    const page = await (await userBrowser.get('/account/authorized')).text();
    expect(page).toContain('Calendar Sync');
    expect(page).toContain('<span class="tag">api</span>');
    const applicationId = /action="\/account\/authorized\/([0-9a-f-]{36})\/revoke"/.exec(page)![1]!;
    const revoked = await userBrowser.post(`/account/authorized/${applicationId}/revoke`, formFields(page));
    expect(await revoked.text()).toContain('Access for “Calendar Sync” revoked.');
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: tokens.access_token })).status).toBe(401);

    // Consent is no longer remembered: the next authorization asks again.
    const again = await authorizationRequest(config, 'openid api');
    expect((await userBrowser.get(again.url.pathname + again.url.search)).status).toBe(200);
  });
});

describe('editing an application', () => {
  it('changes redirect URIs and scopes; authorization requests follow the new registration', async () => {
    const created = await (
      await register({ name: 'Editable', redirect_uris: 'http://localhost:4000/callback', scopes: ['openid', 'api'] })
    ).text();
    const id = /action="\/applications\/([0-9a-f-]{36})\/secret"/.exec(created)![1]!;
    const clientId = clientIdOf(created)!;
    const detail = await (await browser.get(`/applications/${id}`)).text();
    const { _csrf } = formFields(detail);
    const body = new URLSearchParams({ _csrf: _csrf!, name: 'Edited', redirect_uris: 'https://edited.example.com/cb' });
    body.append('scopes', 'read_api');
    const saved = await fetch(`${t.url}/applications/${id}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: `agora_session=${browser.cookie('agora_session')}; agora_csrf=${browser.cookie('agora_csrf')}`,
      },
      body: body.toString(),
    });
    expect(saved.status).toBe(200);
    const page = await saved.text();
    expect(page).toContain('Saved.');
    expect(page).toContain('<code>https://edited.example.com/cb</code>');

    const authorize = (redirectUri: string, scope: string) =>
      browser.get(
        `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope, code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })}`,
      );
    expect((await authorize('http://localhost:4000/callback', 'read_api')).status).toBe(400);
    const narrowed = await authorize('https://edited.example.com/cb', 'api');
    expect(new URL(narrowed.headers.get('location')!).searchParams.get('error')).toBe('invalid_scope');
    expect((await authorize('https://edited.example.com/cb', 'read_api')).status).toBe(200);
  });

  it('refuses an invalid change with the message beside the field', async () => {
    const created = await (await register({ name: 'Strict', redirect_uris: 'http://localhost:4000/callback', scopes: ['api'] })).text();
    const id = /action="\/applications\/([0-9a-f-]{36})\/secret"/.exec(created)![1]!;
    const detail = await (await browser.get(`/applications/${id}`)).text();
    const res = await browser.post(`/applications/${id}`, {
      _csrf: formFields(detail)._csrf!,
      name: 'Strict',
      redirect_uris: 'ftp://nope',
      scopes: 'api',
    });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain('<p class="field-error" id="redirect-uris-error" role="alert">Redirect URIs must use https');
  });
});

describe('deleting an application from its page', () => {
  it('removes it and every token issued to it stops working', async () => {
    const created = await (
      await register({ name: 'Short-lived', redirect_uris: 'http://localhost:4000/callback', scopes: ['openid', 'api'] })
    ).text();
    const id = /action="\/applications\/([0-9a-f-]{36})\/secret"/.exec(created)![1]!;
    const app = { clientId: clientIdOf(created)!, clientSecret: secretOf(created)!, applicationId: id };
    const config = await discover(t, app);
    const request = await authorizationRequest(config, 'openid api');
    const callback = new URL(await approveInBrowser(t, request.url, await createUser(t)));
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: request.codeVerifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
    });
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: tokens.access_token })).status).toBe(200);

    const detail = await (await browser.get(`/applications/${id}`)).text();
    expect(detail).toContain(`href="/applications/${id}/delete"`);
    const confirm = await browser.get(`/applications/${id}/delete`);
    expect(confirm.status).toBe(200);
    const confirmPage = await confirm.text();
    expect(confirmPage).toContain('Delete “Short-lived”?');
    expect(confirmPage).toContain('This cannot be undone.');
    // Looking at the confirmation deletes nothing.
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: tokens.access_token })).status).toBe(200);
    const res = await browser.post(`/applications/${id}/delete`, formFields(confirmPage));
    expect(res.status).toBe(303);
    expect(await (await browser.get('/applications')).text()).not.toContain('Short-lived');
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: tokens.access_token })).status).toBe(401);
  });
});
