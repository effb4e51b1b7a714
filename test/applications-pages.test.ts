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

interface FormValues {
  name: string;
  redirect_uris: string;
  scopes: string[];
  client_type?: string;
  post_logout_redirect_uris?: string;
}

/** The form's fields with repeated `scopes`. */
function formBody(page: string, values: FormValues): URLSearchParams {
  const body = new URLSearchParams({ _csrf: formFields(page)._csrf!, name: values.name, redirect_uris: values.redirect_uris });
  for (const s of values.scopes) body.append('scopes', s);
  if (values.client_type !== undefined) body.set('client_type', values.client_type);
  if (values.post_logout_redirect_uris !== undefined) body.set('post_logout_redirect_uris', values.post_logout_redirect_uris);
  return body;
}

/** Posts the registration form: the answer (a 303 to the new application's page, or 422). */
async function register(values: FormValues): Promise<Response> {
  return browser.post('/applications', formBody(await (await browser.get('/applications')).text(), values));
}

/** Registers an application and opens the page the form leads to: its id and that page (with the secret, once). */
async function registered(values: FormValues): Promise<{ id: string; html: string }> {
  const res = await register(values);
  expect(res.status).toBe(303);
  const location = res.headers.get('location')!;
  const id = /^\/applications\/([0-9a-f-]{36})$/.exec(location)![1]!;
  return { id, html: await (await browser.get(location)).text() };
}

const secretOf = (page: string) => /<code id="client-secret" class="secret">(agora_ocs_[0-9A-Za-z]+)<\/code\s*>/.exec(page)?.[1];
const clientIdOf = (page: string) => /<code id="client-id">([^<]+)<\/code>/.exec(page)?.[1];

describe('applications pages', () => {
  it('register an application and show its ID, its secret once, and the endpoint URLs', async () => {
    const { id, html: page } = await registered({
      name: 'Ticket Scanner',
      redirect_uris: 'http://localhost:4000/callback\nhttps://scanner.example.com/cb',
      scopes: ['openid', 'api'],
    });
    expect(secretOf(page)).toBeDefined();
    expect(clientIdOf(page)).toBeDefined();
    expect(page).toContain('Copy it now: it will not be shown again.');
    for (const url of ['/oauth/authorize', '/oauth/token', '/.well-known/openid-configuration']) expect(page).toContain(`${t.url}${url}`);
    const list = await (await browser.get('/applications')).text();
    expect(list).toContain('Ticket Scanner');
    expect(list).not.toContain(secretOf(page)!);
    // The secret was shown once: the page's own address, reloaded, no longer has it.
    const reloaded = await (await browser.get(`/applications/${id}`)).text();
    expect(clientIdOf(reloaded)).toBe(clientIdOf(page));
    expect(secretOf(reloaded)).toBeUndefined();
  });

  it.each([
    [{ name: '', redirect_uris: 'https://a.example/cb', scopes: ['api'] }, 'app-name-error', 'Name must be 1 to 100 characters'],
    [
      { name: 'x', redirect_uris: 'http://evil.example/cb', scopes: ['api'] },
      'redirect-uris-error',
      'Line 1: Redirect URIs must use https',
    ],
    [{ name: 'x', redirect_uris: '', scopes: ['api'] }, 'redirect-uris-error', 'Give between 1 and 10 redirect URIs'],
    [{ name: 'x', redirect_uris: 'https://a.example/cb', scopes: [] }, 'scopes-error', 'Choose at least one scope'],
  ])('answer %j with 422 and the message beside the field', async (values, id, message) => {
    const res = await register(values);
    expect(res.status).toBe(422);
    expect(await res.text()).toContain(`<p class="field-error" id="${id}" role="alert">${message}`);
  });

  it('regenerate the secret: the old one stops working, the new one works', async () => {
    const { id, html: created } = await registered({
      name: 'Rotator',
      redirect_uris: 'http://localhost:4000/callback',
      scopes: ['openid', 'api'],
    });
    const clientId = clientIdOf(created)!;
    const oldSecret = secretOf(created)!;
    const detail = await (await browser.get(`/applications/${id}`)).text();
    expect(detail).not.toContain(oldSecret);
    // The page links to a confirmation; only its form regenerates.
    expect(detail).toContain(`href="/applications/${id}/secret"`);
    const confirm = await (await browser.get(`/applications/${id}/secret`)).text();
    expect(confirm).toContain('Regenerate the secret of “Rotator”?');
    const { posted, html: rotated } = await browser.submit(`/applications/${id}/secret`, formFields(confirm));
    expect(posted.status).toBe(303);
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
    const { id } = await registered({ name: 'Mine', redirect_uris: 'http://localhost:4000/callback', scopes: ['api'] });
    const stranger = new Browser(t.url);
    await signIn(stranger, (await createUser(t)).username, TEST_PASSWORD);
    for (const path of [`/applications/${id}`, `/applications/${id}/delete`, `/applications/${id}/secret`, '/applications/not-a-uuid']) {
      const res = await stranger.get(path);
      expect(res.status).toBe(404);
      expect(await res.text()).toContain('Page not found');
    }
    const page = await (await stranger.get('/applications')).text();
    for (const path of [`/applications/${id}/delete`, `/applications/${id}/secret`, `/applications/${id}`]) {
      expect(
        (await stranger.post(path, { ...formFields(page), name: 'Stolen', redirect_uris: 'https://x.example/cb', scopes: 'api' })).status,
      ).toBe(404);
    }
    const mine = await (await browser.get(`/applications/${id}`)).text();
    expect(mine).toContain('<h1>Mine</h1>');
  });
});

describe('authorized applications page', () => {
  it('lists an approved application and revokes its access: the token stops working', async () => {
    const { html: created } = await registered({
      name: 'Calendar Sync',
      redirect_uris: 'http://localhost:4000/callback',
      scopes: ['openid', 'api'],
    });
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
    const applicationId = /href="\/account\/authorized\/([0-9a-f-]{36})\/revoke"/.exec(page)![1]!;
    const confirm = await (await userBrowser.get(`/account/authorized/${applicationId}/revoke`)).text();
    expect(confirm).toContain('Revoke access for “Calendar Sync”?');
    const { posted, html: revoked } = await userBrowser.submit(`/account/authorized/${applicationId}/revoke`, formFields(confirm));
    expect(posted.headers.get('location')).toBe('/account/authorized');
    expect(revoked).toContain('Access for “Calendar Sync” revoked.');
    // Reloading the list does not repeat the notice, and the application is gone from it.
    const reloaded = await (await userBrowser.get('/account/authorized')).text();
    expect(reloaded).not.toContain('Calendar Sync');
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: tokens.access_token })).status).toBe(401);

    // Consent is no longer remembered: the next authorization asks again.
    const again = await authorizationRequest(config, 'openid api');
    expect((await userBrowser.get(again.url.pathname + again.url.search)).status).toBe(200);
  });
});

describe('editing an application', () => {
  it('changes redirect URIs and scopes; authorization requests follow the new registration', async () => {
    const { id, html: created } = await registered({
      name: 'Editable',
      redirect_uris: 'http://localhost:4000/callback',
      scopes: ['openid', 'api'],
    });
    const clientId = clientIdOf(created)!;
    const detail = await (await browser.get(`/applications/${id}`)).text();
    const body = formBody(detail, { name: 'Edited', redirect_uris: 'https://edited.example.com/cb', scopes: ['read_api'] });
    const { posted, html: page } = await browser.submit(`/applications/${id}`, body);
    expect(posted.status).toBe(303);
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
    const { id } = await registered({ name: 'Strict', redirect_uris: 'http://localhost:4000/callback', scopes: ['api'] });
    const detail = await (await browser.get(`/applications/${id}`)).text();
    const res = await browser.post(`/applications/${id}`, formBody(detail, { name: '', redirect_uris: 'ftp://nope', scopes: [] }));
    expect(res.status).toBe(422);
    const page = await res.text();
    // Every invalid field at once, each beside its field, with what was typed kept.
    expect(page).toContain('<p class="field-error" id="app-name-error" role="alert">Name must be 1 to 100 characters');
    expect(page).toContain('<p class="field-error" id="redirect-uris-error" role="alert">Line 1: Redirect URIs must use https');
    expect(page).toContain('<p class="field-error" id="scopes-error" role="alert">Choose at least one scope');
    expect(page).toContain('ftp://nope</textarea>');
  });
});

describe('deleting an application from its page', () => {
  it('removes it and every token issued to it stops working', async () => {
    const { id, html: created } = await registered({
      name: 'Short-lived',
      redirect_uris: 'http://localhost:4000/callback',
      scopes: ['openid', 'api'],
    });
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
    const { posted, html } = await browser.submit(`/applications/${id}/delete`, formFields(confirmPage));
    expect(posted.headers.get('location')).toBe('/applications');
    expect(html).toContain('Application “Short-lived” deleted.');
    expect(await (await browser.get('/applications')).text()).not.toContain('Short-lived');
    expect((await browser.get(`/applications/${id}`)).status).toBe(404);
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: tokens.access_token })).status).toBe(401);
  });
});

describe('public and confidential applications', () => {
  it('registers a public application: no secret shown, its type on the page and the list, no way to rotate a secret', async () => {
    const form = await (await browser.get('/applications')).text();
    expect(form).toMatch(/<input type="radio" name="client_type" value="confidential" checked \/>/);
    expect(form).toContain('Public — a single-page, mobile, desktop or command-line app: no secret, PKCE only');
    expect(form).toContain('The type cannot be changed after registering.');
    const { id, html: page } = await registered({
      name: 'Phone App',
      client_type: 'public',
      redirect_uris: 'com.example.phone:/callback\nhttp://127.0.0.1/callback',
      post_logout_redirect_uris: 'com.example.phone:/signed-out',
      scopes: ['openid', 'api'],
    });
    expect(secretOf(page)).toBeUndefined();
    expect(page).not.toContain('Application Secret');
    expect(page).toContain('Application registered.');
    expect(page).toMatch(/<strong>Public<\/strong>: no secret/);
    expect(page).toContain('it cannot be changed');
    expect(page).toContain('<code>com.example.phone:/signed-out</code>');
    expect(page).not.toContain('Regenerate secret');
    expect(page).not.toContain('name="client_type"');
    const list = await (await browser.get('/applications')).text();
    expect(list).toMatch(/data-label="Type">Public</);
    expect((await browser.get(`/applications/${id}/secret`)).status).toBe(422);
    const detail = await (await browser.get(`/applications/${id}`)).text();
    const refused = await browser.post(`/applications/${id}/secret`, new URLSearchParams({ _csrf: formFields(detail)._csrf! }));
    expect(refused.status).toBe(422);
    // Editing keeps it public, whatever the form says.
    const edited = formBody(detail, {
      name: 'Phone App 2',
      redirect_uris: 'com.example.phone:/callback',
      scopes: ['api'],
      client_type: 'confidential',
    });
    const { posted, html: after } = await browser.submit(`/applications/${id}`, edited);
    expect(posted.status).toBe(303);
    expect(after).toMatch(/<strong>Public<\/strong>: no secret/);
    expect(secretOf(after)).toBeUndefined();
    // The post-logout redirect URIs left empty are cleared.
    expect(after).not.toContain('com.example.phone:/signed-out');
  });

  it('shows a confidential application as such, with its secret and post-logout redirect URIs', async () => {
    const { html: page } = await registered({
      name: 'Web App',
      client_type: 'confidential',
      redirect_uris: 'https://web.example.com/cb',
      post_logout_redirect_uris: 'https://web.example.com/bye',
      scopes: ['openid'],
    });
    expect(secretOf(page)).toBeDefined();
    expect(page).toMatch(/<strong>Confidential<\/strong>: authenticates with its secret/);
    expect(page).toContain('<code>https://web.example.com/bye</code>');
    expect(page).toContain('Regenerate secret');
  });

  it('refuses a private-use scheme for a confidential client, a bad post-logout URI and an unknown type, beside their fields', async () => {
    const res = await register({
      name: 'Mixed',
      client_type: 'confidential',
      redirect_uris: 'com.example.app:/callback',
      post_logout_redirect_uris: 'https://ok.example/bye#frag',
      scopes: ['api'],
    });
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(page).toContain('<p class="field-error" id="redirect-uris-error" role="alert">Line 1: Redirect URIs must use https');
    expect(page).toContain(
      '<p class="field-error" id="post-logout-redirect-uris-error" role="alert">Line 1: Redirect URIs must not contain a fragment',
    );
    expect(page).toContain('https://ok.example/bye#frag</textarea>');
    expect(page).toMatch(/value="confidential" checked/);

    const publicOne = await register({ name: 'Native', client_type: 'public', redirect_uris: 'ftp://x', scopes: ['api'] });
    const publicPage = await publicOne.text();
    expect(publicPage).toContain('or a private-use scheme in reverse domain form such as com.example.app:/callback');
    // The choice is kept when the form comes back.
    expect(publicPage).toMatch(/value="public" checked/);

    const unknown = await register({ name: 'Odd', client_type: 'spa', redirect_uris: 'https://x.example/cb', scopes: ['api'] });
    expect(unknown.status).toBe(422);
    expect(await unknown.text()).toContain('<p class="field-error" id="client-type-error" role="alert">Choose confidential or public');
  });
});

describe("an application's profile: homepage, description and logo", () => {
  const profile = {
    description: 'Scans <b>tickets</b> at the door & checks people in.',
    client_uri: 'https://scanner.example.com/about',
    logo_uri: 'https://cdn.example.net/scanner/logo.png',
  };

  /** The registration form with the profile's fields as well. */
  async function registerWith(values: FormValues & Partial<typeof profile>): Promise<Response> {
    const body = formBody(await (await browser.get('/applications')).text(), values);
    for (const name of ['description', 'client_uri', 'logo_uri'] as const) if (values[name] !== undefined) body.set(name, values[name]);
    return browser.post('/applications', body);
  }

  it('is shown on the consent page with the owner, escaped, the logo at a fixed size without a referrer, allowed by the CSP', async () => {
    const res = await registerWith({
      name: 'Scanner <i>Pro</i>',
      redirect_uris: 'https://scanner.example.com/cb',
      scopes: ['openid', 'api'],
      ...profile,
    });
    expect(res.status).toBe(303);
    const detail = await (await browser.get(res.headers.get('location')!)).text();
    expect(detail).toContain('Scans &lt;b&gt;tickets&lt;/b&gt; at the door &amp; checks people in.');
    expect(detail).toContain('<code>https://scanner.example.com/about</code>');
    expect(detail).toContain('value="https://cdn.example.net/scanner/logo.png"');
    const clientId = clientIdOf(detail)!;

    // Another user, signed out, follows the application's authorization request.
    const user = await createUser(t);
    const visitor = new Browser(t.url);
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: 'https://scanner.example.com/cb',
      scope: 'openid api',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const toSignIn = await visitor.get(`/oauth/authorize?${query}`);
    expect(toSignIn.status).toBe(302);
    const signInPage = await (await visitor.get(toSignIn.headers.get('location')!)).text();
    expect(signInPage).toContain('<h1>Sign in to continue to <span class="app-name">Scanner &lt;i&gt;Pro&lt;/i&gt;</span></h1>');
    expect(signInPage).toContain('<title>Sign in to continue to Scanner &lt;i&gt;Pro&lt;/i&gt;');

    const returnTo = new URL(toSignIn.headers.get('location')!, t.url).searchParams.get('return_to')!;
    const consent = (await visitor.follow(await signIn(visitor, user.username, TEST_PASSWORD, returnTo))).res;
    expect(consent.status).toBe(200);
    const page = await consent.text();
    expect(page).toContain(
      // In a box with the initial behind it, which a logo that cannot load leaves showing (no broken-image icon).
      '<span class="app-logo-box" aria-hidden="true">S<img class="app-logo" src="https://cdn.example.net/scanner/logo.png" width="48" height="48" alt="" referrerpolicy="no-referrer" decoding="async" data-initial="S" /></span>',
    );
    expect(page).toContain(`<p class="app-owner">by Dev Eloper (@${developer.username})</p>`);
    expect(page).toContain('<p class="app-description">Scans &lt;b&gt;tickets&lt;/b&gt; at the door &amp; checks people in.</p>');
    expect(page).toContain(
      '<a href="https://scanner.example.com/about" target="_blank" rel="noopener noreferrer">https://scanner.example.com/about</a>',
    );
    expect(page).not.toContain('<b>tickets</b>');
    const csp = consent.headers.get('content-security-policy')!;
    expect(csp).toMatch(/(^|;\s*)img-src 'self' data: https:\/\/cdn\.example\.net(;|$)/);
    // Every other page keeps images to this site.
    expect((await visitor.get('/')).headers.get('content-security-policy')).toMatch(/(^|;\s*)img-src 'self' data:(;|$)/);
  });

  it('leaves the consent page as before when an application has no profile', async () => {
    const res = await register({ name: 'Plain', redirect_uris: 'https://plain.example/cb', scopes: ['openid'] });
    const clientId = clientIdOf(await (await browser.get(res.headers.get('location')!)).text())!;
    const consent = await browser.get(
      `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: 'https://plain.example/cb', scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })}`,
    );
    const page = await consent.text();
    expect(page).not.toContain('<img');
    expect(page).not.toContain('app-description');
    expect(page).toContain(`by Dev Eloper (@${developer.username})`);
    expect(consent.headers.get('content-security-policy')).toMatch(/(^|;\s*)img-src 'self' data:(;|$)/);
  });

  it.each([
    ['description', { description: 'x'.repeat(501) }, 'app-description-error', 'Description must be at most 500 characters'],
    ['client_uri', { client_uri: 'javascript:alert(1)' }, 'app-client-uri-error', 'Homepage URL must use https (http only for localhost)'],
    [
      'client_uri',
      { client_uri: 'http://scanner.example.com/' },
      'app-client-uri-error',
      'Homepage URL must use https (http only for localhost)',
    ],
    ['client_uri', { client_uri: 'not a url' }, 'app-client-uri-error', 'Homepage URL must be an absolute address starting with https://'],
    [
      'client_uri',
      { client_uri: `https://a.example/${'x'.repeat(490)}` },
      'app-client-uri-error',
      'Homepage URL must be at most 500 characters',
    ],
    ['logo_uri', { logo_uri: 'http://cdn.example.net/logo.png' }, 'app-logo-uri-error', 'Logo URL must use https'],
    ['logo_uri', { logo_uri: 'http://localhost/logo.png' }, 'app-logo-uri-error', 'Logo URL must use https'],
    ['logo_uri', { logo_uri: 'data:image/png;base64,iVBORw0KGgo=' }, 'app-logo-uri-error', 'Logo URL must use https'],
    ['logo_uri', { logo_uri: 'javascript:alert(1)' }, 'app-logo-uri-error', 'Logo URL must use https'],
    ['logo_uri', { logo_uri: 'https://user:pw@cdn.example.net/logo.png' }, 'app-logo-uri-error', 'Logo URL must not contain credentials'],
  ])('refuses a bad %s with 422, the message beside it and the value kept', async (_field, bad, id, message) => {
    const value = Object.values(bad)[0]!;
    const res = await registerWith({ name: 'Bad profile', redirect_uris: 'https://bad.example/cb', scopes: ['api'], ...bad });
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(page).toContain(`<p class="field-error" id="${id}" role="alert">${message}`);
    expect(page).toContain(value.replace(/&/g, '&amp;').replace(/"/g, '&quot;'));
  });

  it('is changed and cleared from the application page; a homepage on localhost may use http', async () => {
    const res = await registerWith({ name: 'Changing', redirect_uris: 'https://change.example/cb', scopes: ['api'], ...profile });
    const id = /^\/applications\/(.+)$/.exec(res.headers.get('location')!)![1]!;
    const detail = await (await browser.get(`/applications/${id}`)).text();
    const body = formBody(detail, { name: 'Changing', redirect_uris: 'https://change.example/cb', scopes: ['api'] });
    body.set('description', 'Now in\r\ntwo lines');
    body.set('client_uri', 'http://localhost:8080/');
    body.set('logo_uri', '');
    const { posted, html: page } = await browser.submit(`/applications/${id}`, body);
    expect(posted.status).toBe(303);
    expect(page).toContain('Now in\ntwo lines');
    expect(page).toContain('<code>http://localhost:8080/</code>');
    expect(page).not.toContain('cdn.example.net');
  });
});

describe('redirect URI errors name their line', () => {
  it('says which line of the form is wrong, every one of them, counting blank lines', async () => {
    const res = await register({
      name: 'Lines',
      redirect_uris: 'https://ok.example/cb\n\nhttp://evil.example/cb\nhttps://ok.example/two\nhttps://ok.example/cb#frag',
      scopes: ['api'],
    });
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(page).toContain(
      '<p class="field-error" id="redirect-uris-error" role="alert">Line 3: Redirect URIs must use https (http is allowed only for localhost) Line 5: Redirect URIs must not contain a fragment (#)',
    );
  });
});

describe('the sign-in page', () => {
  it('says where signing in leads: Agora itself, or connecting a device', async () => {
    const plain = await (await new Browser(t.url).get('/sign-in')).text();
    expect(plain).toContain('<h1>Sign in to Agora</h1>');
    const visitor = new Browser(t.url);
    const toSignIn = await visitor.get('/oauth/device?user_code=BCDF-GHJK');
    expect(toSignIn.status).toBe(303);
    const device = await (await visitor.get(toSignIn.headers.get('location')!)).text();
    expect(device).toContain('<h1>Sign in to connect a device</h1>');
  });
});
