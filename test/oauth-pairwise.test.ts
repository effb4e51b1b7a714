import { DataSource } from 'typeorm';
import * as client from 'openid-client';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { GrantsService } from '../src/oauth/consent/grants.service.js';
import { approveInBrowser, authorizationRequest, REDIRECT_URI, RegisteredApp } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';
import type { User } from '../src/users/user.model.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ OAUTH_DYNAMIC_REGISTRATION: 'true' });
});
afterAll(() => t.close());

/** A confidential client on `redirectUri`'s host, with this subject type. */
async function app(subjectType: 'public' | 'pairwise', redirectUri = REDIRECT_URI): Promise<RegisteredApp & { redirectUri: string }> {
  const owner = await createUser(t);
  const { application, clientSecret } = await t.get(ApplicationsService).create(owner.id, {
    name: `A ${subjectType} client`,
    redirectUris: [redirectUri],
    scopes: ['openid', 'profile', 'api'],
    subjectType,
  });
  return { clientId: application.clientId, clientSecret: clientSecret!, applicationId: application.id, redirectUri };
}

/** The code flow driven by openid-client, as `user`: the configuration and the tokens (id_token validated by the library). */
async function flow(registered: RegisteredApp & { redirectUri: string }, user: User) {
  const config = await client.discovery(new URL(t.url), registered.clientId, undefined, client.ClientSecretPost(registered.clientSecret), {
    execute: [client.allowInsecureRequests],
  });
  const request = await authorizationRequest(config, 'openid profile');
  const url = new URL(request.url);
  url.searchParams.set('redirect_uri', registered.redirectUri);
  const callback = await approveInBrowser(t, url, user, new Browser(t.url));
  const tokens = await client.authorizationCodeGrant(config, new URL(callback), {
    pkceCodeVerifier: request.codeVerifier,
    expectedState: request.state,
    expectedNonce: request.nonce,
  });
  return { config, tokens };
}

describe('pairwise subject identifiers (OpenID Connect Core §8.1)', () => {
  it('discovery lists public and pairwise', async () => {
    const metadata = (await (await fetch(`${t.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(metadata.subject_types_supported).toEqual(['public', 'pairwise']);
  });

  it('a pairwise client sees one stable sub, not the user id, in the id_token, userinfo and introspection', async () => {
    const user = await createUser(t);
    const pairwise = await app('pairwise');
    const { config, tokens } = await flow(pairwise, user);
    const sub = tokens.claims()!.sub;
    expect(sub).not.toBe(user.id);
    expect(sub).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // openid-client checks that userinfo's sub is the id_token's.
    const userinfo = await client.fetchUserInfo(config, tokens.access_token, sub);
    expect(userinfo).toMatchObject({ sub, name: user.name });
    const introspection = await client.tokenIntrospection(config, tokens.access_token);
    expect(introspection).toMatchObject({ active: true, sub });
    // A username is the same for every client: a pairwise client is not told it.
    expect(introspection).not.toHaveProperty('username');
    // The same user again: the same sub.
    const again = await flow(pairwise, user);
    expect(again.tokens.claims()!.sub).toBe(sub);
  });

  it('clients of one sector (the redirect URIs’ host) share a sub; another sector’s differs; a public client sees the user id', async () => {
    const user = await createUser(t);
    const first = await flow(await app('pairwise'), user);
    const sameHost = await flow(await app('pairwise', 'http://localhost:4000/other-callback'), user);
    const otherHost = await flow(await app('pairwise', 'http://127.0.0.1:4000/callback'), user);
    const publicSubject = await flow(await app('public'), user);
    expect(sameHost.tokens.claims()!.sub).toBe(first.tokens.claims()!.sub);
    expect(otherHost.tokens.claims()!.sub).not.toBe(first.tokens.claims()!.sub);
    expect(publicSubject.tokens.claims()!.sub).toBe(user.id);
    // Another user of the same sector: another sub.
    const other = await flow(await app('pairwise'), await createUser(t));
    expect(other.tokens.claims()!.sub).not.toBe(first.tokens.claims()!.sub);
  });

  it('RP-initiated logout recognises the pairwise sub of its id_token_hint as the signed-in user', async () => {
    const user = await createUser(t);
    const pairwise = await app('pairwise');
    const config = await client.discovery(new URL(t.url), pairwise.clientId, undefined, client.ClientSecretPost(pairwise.clientSecret), {
      execute: [client.allowInsecureRequests],
    });
    const browser = new Browser(t.url);
    const request = await authorizationRequest(config, 'openid');
    const callback = await approveInBrowser(t, request.url, user, browser);
    const tokens = await client.authorizationCodeGrant(config, new URL(callback), {
      pkceCodeVerifier: request.codeVerifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
    });
    // Signed out at once (no confirmation page): the hint names the user signed in in this browser.
    const res = await browser.get(`/oauth/logout?id_token_hint=${tokens.id_token!}`);
    expect(res.status).toBe(302);
    const { res: page } = await browser.follow(res);
    expect(await page.text()).toMatch(/You are signed out/);
    expect((await browser.get('/account')).headers.get('location')).toMatch(/^\/sign-in/);
  });

  it('dynamic registration: subject_type=pairwise is registered and answered; several hosts or a sector_identifier_uri are refused clearly', async () => {
    const register = (body: Record<string, unknown>) =>
      fetch(`${t.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const ok = await register({ redirect_uris: ['https://rp.example/callback'], subject_type: 'pairwise' });
    expect(ok.status).toBe(201);
    expect(await ok.json()).toMatchObject({ subject_type: 'pairwise' });
    const plain = await register({ redirect_uris: ['https://rp.example/callback'] });
    expect(await plain.json()).toMatchObject({ subject_type: 'public' });
    for (const [body, message] of [
      [{ redirect_uris: ['https://a.example/cb', 'https://b.example/cb'], subject_type: 'pairwise' }, /one host/],
      [
        { redirect_uris: ['https://a.example/cb'], subject_type: 'pairwise', sector_identifier_uri: 'https://a.example/s.json' },
        /sector_identifier_uri is not supported/,
      ],
      [{ redirect_uris: ['https://a.example/cb'], subject_type: 'anonymous' }, /subject_type/],
    ] as const) {
      const refused = await register(body);
      expect(refused.status).toBe(400);
      const answer = (await refused.json()) as { error: string; error_description: string };
      expect(answer.error).toBe('invalid_client_metadata');
      expect(answer.error_description).toMatch(message);
    }
  });
});

/** Once an application has issued tokens or grants, its users' `sub` must not change: one rule, in ApplicationsService. */
describe('changing what computes the sub', () => {
  const used = (applicationId: string, userId: string) => t.get(GrantsService).remember(userId, applicationId, ['openid']);

  it('the dashboard: chosen when registering, refused clearly beside its field, changeable only while the application is unused', async () => {
    const developer = await createUser(t);
    const browser = new Browser(t.url);
    await signIn(browser, developer.username, TEST_PASSWORD);
    const form = (page: string, values: { redirect_uris?: string; subject_type: string }) => {
      const body = new URLSearchParams({
        _csrf: formFields(page)._csrf!,
        name: 'Pairwise app',
        redirect_uris: values.redirect_uris ?? REDIRECT_URI,
        subject_type: values.subject_type,
      });
      body.append('scopes', 'openid');
      return body;
    };
    const list = await (await browser.get('/applications')).text();
    expect(list).toContain('<input type="radio" name="subject_type" value="public" checked />');
    expect(list).toContain('name="subject_type" value="pairwise"');

    const refused = await browser.post(
      '/applications',
      form(list, { redirect_uris: 'https://a.example/cb\nhttps://b.example/cb', subject_type: 'pairwise' }),
    );
    expect(refused.status).toBe(422);
    const refusedPage = await refused.text();
    expect(refusedPage).toMatch(/<p class="field-error" id="subject-type-error" role="alert">[^<]*one host/);
    expect(refusedPage).toContain('name="subject_type" value="pairwise" checked');

    const created = await browser.post('/applications', form(list, { subject_type: 'pairwise' }));
    expect(created.status).toBe(303);
    const path = created.headers.get('location')!;
    const id = path.split('/').at(-1)!;
    const settings = async (values: { redirect_uris?: string; subject_type: string }) =>
      browser.post(path, form(await (await browser.get(path)).text(), values));
    expect(await (await browser.get(path)).text()).toContain('name="subject_type" value="pairwise" checked');

    // Unused: the subject type and the host may change.
    expect((await settings({ subject_type: 'public' })).status).toBe(303);
    expect((await settings({ subject_type: 'pairwise', redirect_uris: 'http://localhost:5000/callback' })).status).toBe(303);
    expect((await settings({ subject_type: 'pairwise' })).status).toBe(303);

    await used(id, developer.id);
    const typeChange = await settings({ subject_type: 'public' });
    expect(typeChange.status).toBe(422);
    expect(await typeChange.text()).toMatch(
      /id="subject-type-error" role="alert">The subject type cannot change from pairwise to public once/,
    );
    const moved = await settings({ subject_type: 'pairwise', redirect_uris: 'http://localhost:5000/callback' });
    expect(moved.status).toBe(422);
    expect(await moved.text()).toMatch(
      /id="redirect-uris-error" role="alert">A pairwise application&#39;s redirect URIs cannot move from localhost:4000 to localhost:5000/,
    );
    // Another path on the same host keeps every sub.
    expect((await settings({ subject_type: 'pairwise', redirect_uris: `${REDIRECT_URI}\nhttp://localhost:4000/other` })).status).toBe(303);
    expect(await t.get(ApplicationsService).get(id)).toMatchObject({
      subjectType: 'pairwise',
      redirectUris: [REDIRECT_URI, 'http://localhost:4000/other'],
    });
  });

  it('RFC 7592: a PUT that would change the subject type or a pairwise client’s host is refused once the client has tokens or grants', async () => {
    const registered = await fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['https://rp.example/callback'], subject_type: 'pairwise' }),
    });
    const info = (await registered.json()) as Record<string, string>;
    const put = async (body: Record<string, unknown>) => {
      const res = await fetch(info.registration_client_uri!, {
        method: 'PUT',
        headers: { authorization: `Bearer ${info.registration_access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: info.client_id, ...body }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    // Unused: allowed (a PUT without subject_type is a public client again, RFC 7592 §2.2).
    expect(await put({ redirect_uris: ['https://rp.example/callback'] })).toMatchObject({ status: 200, body: { subject_type: 'public' } });
    expect(await put({ redirect_uris: ['https://rp.example/callback'], subject_type: 'pairwise' })).toMatchObject({ status: 200 });

    const application = (await t.get(ApplicationsService).findByClientId(info.client_id!))!;
    await used(application.id, (await createUser(t)).id);
    expect(await put({ redirect_uris: ['https://rp.example/callback'] })).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_client_metadata',
        error_description: expect.stringMatching(/^subject_type: The subject type cannot change from pairwise to public/),
      },
    });
    expect(await put({ redirect_uris: ['https://other.example/callback'], subject_type: 'pairwise' })).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_redirect_uri',
        error_description: expect.stringMatching(/^redirect_uris: .*cannot move from rp\.example to other\.example/),
      },
    });
    expect(await put({ redirect_uris: ['https://rp.example/other'], subject_type: 'pairwise' })).toMatchObject({ status: 200 });
  });

  it('the service refuses it whoever asks (here after a token was issued, and still once every token is gone), and a public client’s new host is no change', async () => {
    const user = await createUser(t);
    const pairwise = await app('pairwise');
    await flow(pairwise, user);
    const owner = (await t.get(ApplicationsService).findByClientId(pairwise.clientId))!.ownerId!;
    await expect(
      t
        .get(ApplicationsService)
        .update(pairwise.applicationId, owner, { name: 'x', redirectUris: [REDIRECT_URI], scopes: ['openid'], subjectType: 'public' }),
    ).rejects.toMatchObject({
      code: 'SUBJECTS_IN_USE',
      field: 'subjectType',
    });
    // The user revokes it and housekeeping purges every code and token: its users' subjects are still out there.
    const db = t.get(DataSource);
    for (const table of ['oauth_grants', 'oauth_authorization_codes', 'oauth_refresh_tokens', 'oauth_access_tokens'])
      await db.query(`DELETE FROM ${table} WHERE application_id = $1`, [pairwise.applicationId]);
    await expect(
      t
        .get(ApplicationsService)
        .update(pairwise.applicationId, owner, { name: 'x', redirectUris: [REDIRECT_URI], scopes: ['openid'], subjectType: 'public' }),
    ).rejects.toMatchObject({ code: 'SUBJECTS_IN_USE' });
    const open = await app('public');
    await flow(open, user);
    const openOwner = (await t.get(ApplicationsService).findByClientId(open.clientId))!.ownerId!;
    await expect(
      t
        .get(ApplicationsService)
        .update(open.applicationId, openOwner, { name: 'x', redirectUris: ['https://elsewhere.example/cb'], scopes: ['openid'] }),
    ).resolves.toMatchObject({ subjectType: 'public' });
  });
});
