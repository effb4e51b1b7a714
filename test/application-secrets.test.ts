import * as jose from 'jose';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { startTestApp, TestApp } from './support/test-app.js';

let t: TestApp;
let browser: Browser;
beforeAll(async () => {
  t = await startTestApp();
  const developer = await createUser(t);
  browser = new Browser(t.url);
  await signIn(browser, developer.username, TEST_PASSWORD);
});
afterAll(() => t.close());

const secretOf = (page: string) => /<code id="client-secret" class="secret">(agora_ocs_[0-9A-Za-z]+)<\/code\s*>/.exec(page)?.[1];
const clientIdOf = (page: string) => /<code id="client-id">([^<]+)<\/code>/.exec(page)?.[1];

/** Registers an application through the form: its id, client id and first secret. */
async function register(extra: Record<string, string> = {}): Promise<{ id: string; clientId: string; secret?: string; html: string }> {
  const form = await (await browser.get('/applications')).text();
  const body = new URLSearchParams({
    _csrf: formFields(form)._csrf!,
    name: 'Rotating app',
    redirect_uris: 'http://localhost:4000/cb',
    scopes: 'api',
    ...extra,
  });
  const { posted, html } = await browser.submit('/applications', body);
  expect(posted.status).toBe(303);
  const id = /^\/applications\/([0-9a-f-]{36})$/.exec(posted.headers.get('location')!)![1]!;
  return { id, clientId: clientIdOf(html)!, secret: secretOf(html), html };
}

/** Authenticates with a secret at the introspection endpoint: 200 when it works, 401 when not. */
async function works(clientId: string, secret: string): Promise<boolean> {
  const res = await fetch(`${t.url}/oauth/introspect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: clientId, client_secret: secret, token: 'x' }),
  });
  if (res.status !== 200 && res.status !== 401) throw new Error(`unexpected ${res.status}`);
  return res.status === 200;
}

async function csrf(path: string): Promise<string> {
  return formFields(await (await browser.get(path)).text())._csrf!;
}

describe('two client secrets at once (rotation without downtime)', () => {
  it('generates a second secret beside the first, both working, then deletes the old one, which stops at once', async () => {
    const app = await register();
    const first = app.secret!;
    expect(app.html).toContain('Generate a new secret');
    expect(app.html).not.toContain('Older secret');

    const { posted, html } = await browser.submit(`/applications/${app.id}/secrets`, { _csrf: await csrf(`/applications/${app.id}`) });
    expect(posted.status).toBe(303);
    const second = secretOf(html)!;
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    expect(html).toContain('The older one keeps working until you delete it');
    expect(html).toContain('Older secret');
    expect(html).not.toContain('Generate a new secret');
    expect([await works(app.clientId, first), await works(app.clientId, second)]).toEqual([true, true]);
    // Shown once: the page reloaded has neither.
    const reloaded = await (await browser.get(`/applications/${app.id}`)).text();
    expect(reloaded).not.toContain(first);
    expect(reloaded).not.toContain(second);

    // A third is refused while two exist.
    const third = await browser.post(`/applications/${app.id}/secrets`, { _csrf: await csrf(`/applications/${app.id}`) });
    expect(third.status).toBe(409);

    const confirm = await (await browser.get(`/applications/${app.id}/secrets/previous/delete`)).text();
    expect(confirm).toContain('Delete the older secret of “Rotating app”?');
    const deleted = await browser.submit(`/applications/${app.id}/secrets/previous/delete`, formFields(confirm));
    expect(deleted.posted.status).toBe(303);
    expect(deleted.html).toContain('Secret deleted');
    expect([await works(app.clientId, first), await works(app.clientId, second)]).toEqual([false, true]);
  });

  it('can delete the newer secret instead, keeping the older one; never the only one', async () => {
    const app = await register();
    const first = app.secret!;
    const only = await browser.post(`/applications/${app.id}/secrets/current/delete`, { _csrf: await csrf(`/applications/${app.id}`) });
    expect(only.status).toBe(409);
    expect(await works(app.clientId, first)).toBe(true);

    const { html } = await browser.submit(`/applications/${app.id}/secrets`, { _csrf: await csrf(`/applications/${app.id}`) });
    const second = secretOf(html)!;
    const deleted = await browser.submit(`/applications/${app.id}/secrets/current/delete`, {
      _csrf: await csrf(`/applications/${app.id}/secrets/current/delete`),
    });
    expect(deleted.posted.status).toBe(303);
    expect([await works(app.clientId, first), await works(app.clientId, second)]).toEqual([true, false]);
    expect(deleted.html).not.toContain('Older secret');
  });

  it('regenerating replaces both secrets at once', async () => {
    const app = await register();
    const { html } = await browser.submit(`/applications/${app.id}/secrets`, { _csrf: await csrf(`/applications/${app.id}`) });
    const second = secretOf(html)!;
    const regenerated = await browser.submit(`/applications/${app.id}/secret`, { _csrf: await csrf(`/applications/${app.id}/secret`) });
    const third = secretOf(regenerated.html)!;
    expect([await works(app.clientId, app.secret!), await works(app.clientId, second), await works(app.clientId, third)]).toEqual([
      false,
      false,
      true,
    ]);
  });

  it('keeps another user’s application out of reach', async () => {
    const app = await register();
    const other = new Browser(t.url);
    const stranger = await createUser(t);
    await signIn(other, stranger.username, TEST_PASSWORD);
    const form = formFields(await (await other.get('/applications')).text());
    expect((await other.post(`/applications/${app.id}/secrets`, { _csrf: form._csrf! })).status).toBe(404);
    expect((await other.get(`/applications/${app.id}/secrets/current/delete`)).status).toBe(404);
    expect(await works(app.clientId, app.secret!)).toBe(true);
  });
});

describe('private_key_jwt applications in the dashboard', () => {
  it('registers one with its public keys: no secret, its keys on the page and editable', async () => {
    const { publicKey } = await jose.generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await jose.exportJWK(publicKey)), kid: 'k1' };
    const app = await register({
      client_type: 'confidential',
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: JSON.stringify({ keys: [jwk] }),
    });
    expect(app.secret).toBeUndefined();
    expect(app.html).toContain('(<code>private_key_jwt</code>)');
    expect(app.html).not.toContain('Generate a new secret');
    expect(app.html).toContain('&quot;kid&quot;: &quot;k1&quot;');
    expect((await browser.post(`/applications/${app.id}/secrets`, { _csrf: await csrf(`/applications/${app.id}`) })).status).toBe(422);

    const page = await (await browser.get(`/applications/${app.id}`)).text();
    const fields = formFields(page);
    const body = new URLSearchParams({
      _csrf: fields._csrf!,
      name: 'Rotating app',
      redirect_uris: 'http://localhost:4000/cb',
      scopes: 'api',
      jwks: '',
      jwks_uri: 'https://keys.example/jwks.json',
    });
    const saved = await browser.submit(`/applications/${app.id}`, body);
    expect(saved.posted.status).toBe(303);
    expect(saved.html).toContain('the keys at <code>https://keys.example/jwks.json</code>');
  });

  it('shows what is wrong with the keys on the form again (422)', async () => {
    const form = await (await browser.get('/applications')).text();
    for (const [jwks, problem] of [
      ['{not json', 'must be a JSON Web Key Set'],
      ['{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}', 'must be an RSA, EC or OKP public key'],
      ['', 'either by value (jwks) or by address (jwks_uri)'],
    ]) {
      const res = await browser.post(
        '/applications',
        new URLSearchParams({
          _csrf: formFields(form)._csrf!,
          name: 'Keyed',
          redirect_uris: 'http://localhost:4000/cb',
          scopes: 'api',
          client_type: 'confidential',
          token_endpoint_auth_method: 'private_key_jwt',
          jwks: jwks!,
        }),
      );
      expect(res.status).toBe(422);
      expect(await res.text()).toContain(problem);
    }
  });
});
