import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { ResourceServersService } from '../src/oauth/resources/resource-servers.service.js';
import { ResourceServerDeletion } from '../src/oauth/resources/resource-server-deletion.js';
import type { User } from '../src/users/user.model.js';
import { DataSource } from 'typeorm';
import { securityNoticeJobs } from './support/account-links.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, createUserWithToken, TEST_PASSWORD } from './support/fixtures.js';
import { createOrganizer } from './support/events.js';
import { idOfType } from '../src/graphql/global-id.js';
import { graphql } from './support/http.js';
import {
  authorizationRequest,
  discover,
  discoverPublic,
  REDIRECT_URI,
  registerApp,
  registerPublicApp,
  type RegisteredApp,
} from './support/oauth.js';
import { runCli } from './support/processes.js';
import { startTestApp, TestApp } from './support/test-app.js';

/**
 * Resource servers other than Agora (RFC 8707): registered with an identifier, named by clients as
 * `resource`, carried by tokens as their audience; verified by JWKS or by introspection with their own
 * credential, and refused by Agora's own API.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const VIEWER = '{ viewer { id } }';
let counter = 0;

interface Registered {
  id: string;
  identifier: string;
  introspectionId: string;
  secret: string;
}

async function registerResourceServer(format: 'jwt' | 'opaque' = 'jwt', ownerId?: string): Promise<Registered> {
  const owner = ownerId ?? (await createUser(t)).id;
  const identifier = `https://rs${++counter}-${Date.now()}.example.com/api`;
  const { resourceServer, introspectionSecret } = await t
    .get(ResourceServersService)
    .create(owner, { name: `Billing API ${counter}`, identifier, accessTokenFormat: format });
  return { id: resourceServer.id, identifier, introspectionId: resourceServer.introspectionId, secret: introspectionSecret };
}

/** support/oauth.ts's authorization request, with each `resource` appended (the parameter may repeat). */
async function authorizationUrl(config: client.Configuration, resources: string[], scope = 'openid api offline_access') {
  const request = await authorizationRequest(config, scope);
  for (const r of resources) request.url.searchParams.append('resource', r);
  return request;
}

/**
 * Signs in, reads the consent page and approves it with every hidden field (repeated `resource` kept);
 * `consent` is null when an earlier approval covered the request (no page, the code at once).
 */
async function approve(url: URL, user: User): Promise<{ callback: URL; consent: string | null }> {
  const browser = new Browser(t.url);
  await signIn(browser, user.username, TEST_PASSWORD);
  const res = await browser.get(url.pathname + url.search);
  if (res.status === 302) return { callback: new URL(res.headers.get('location')!), consent: null };
  const consent = await res.text();
  expect(res.status).toBe(200);
  const form = new URLSearchParams();
  const consentForm = consent.slice(consent.indexOf('<form method="post" action="/oauth/authorize">'));
  for (const match of consentForm
    .slice(0, consentForm.indexOf('</form>'))
    .matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) {
    form.append(
      match[1]!,
      match[2]!
        .replace(/&amp;/g, '&')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'"),
    );
  }
  form.append('decision', 'approve');
  const decided = await browser.post('/oauth/authorize', form);
  expect(decided.status).toBe(302);
  return { callback: new URL(decided.headers.get('location')!), consent };
}

async function tokens(
  config: client.Configuration,
  user: User,
  authorized: string[],
  exchange: Record<string, string> | URLSearchParams = {},
) {
  const { url, codeVerifier, state, nonce } = await authorizationUrl(config, authorized);
  const { callback, consent } = await approve(url, user);
  const response = await client.authorizationCodeGrant(
    config,
    callback,
    { pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce },
    exchange,
  );
  return { response, consent };
}

async function clientAndUser(): Promise<{ app: RegisteredApp; config: client.Configuration; user: User }> {
  const owner = await createUser(t);
  const app = await registerApp(t, owner.id, ['openid', 'profile', 'api', 'offline_access']);
  return { app, config: await discover(t, app), user: await createUser(t) };
}

function verifyJwt(token: string, audience: string) {
  return jwtVerify(token, createRemoteJWKSet(new URL(`${t.url}/oauth/discovery/keys`)), {
    issuer: t.url,
    audience,
    typ: 'at+jwt',
    currentDate: t.clock.now(),
  });
}

async function introspectAs(
  who: { id: string; secret: string },
  token: string,
  how: 'basic' | 'post' = 'basic',
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const body = new URLSearchParams({ token });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (how === 'basic') headers.authorization = `Basic ${Buffer.from(`${who.id}:${who.secret}`).toString('base64')}`;
  else {
    body.append('client_id', who.id);
    body.append('client_secret', who.secret);
  }
  const res = await fetch(`${t.url}/oauth/introspect`, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

const asServer = (rs: Registered) => ({ id: rs.introspectionId, secret: rs.secret });
const asClient = (app: RegisteredApp) => ({ id: app.clientId, secret: app.clientSecret });

async function expectRefusedByApi(token: string): Promise<void> {
  const res = await graphql(t.url, VIEWER, { bearer: token });
  expect(res.status).toBe(401);
  expect(res.text).toBe(JSON.stringify({ message: '401 Unauthorized' }));
  expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
}

async function tokenRequest(fields: URLSearchParams): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${t.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: fields,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('a token for a registered resource server (RFC 8707)', () => {
  it('is a JWT for its identifier, verified with the JWKS, refused by Agora’s API, introspected by it alone', async () => {
    const rs = await registerResourceServer('jwt');
    const other = await registerResourceServer('jwt');
    const { app, config, user } = await clientAndUser();
    const { response, consent } = await tokens(config, user, [rs.identifier]);
    // The consent page names where the token goes, and who registered it.
    expect(consent).toContain(`Billing API`);
    expect(consent).toContain(rs.identifier);

    expect(decodeProtectedHeader(response.access_token).typ).toBe('at+jwt');
    const { payload } = await verifyJwt(response.access_token, rs.identifier);
    expect(payload).toMatchObject({ aud: rs.identifier, sub: user.id, client_id: app.clientId, scope: 'openid api offline_access' });
    await expect(verifyJwt(response.access_token, t.url)).rejects.toThrow();
    await expectRefusedByApi(response.access_token);

    for (const how of ['basic', 'post'] as const) {
      const mine = await introspectAs(asServer(rs), response.access_token, how);
      expect(mine.status).toBe(200);
      expect(mine.headers.get('cache-control')).toBe('no-store');
      expect(mine.body).toEqual({
        active: true,
        aud: rs.identifier,
        scope: 'openid api offline_access',
        client_id: app.clientId,
        sub: user.id,
        token_type: 'Bearer',
        exp: payload.exp,
        iat: expect.any(Number),
        iss: t.url,
      });
    }
    expect((await introspectAs(asServer(other), response.access_token)).body).toEqual({ active: false });
    // A refresh token is never described to a resource server.
    expect((await introspectAs(asServer(rs), response.refresh_token!)).body).toEqual({ active: false });
    // The client still introspects its own token.
    const own = await introspectAs(asClient(app), response.access_token, 'post');
    expect(own.body).toMatchObject({ active: true, aud: rs.identifier, client_id: app.clientId });
  });

  it('for Agora and a resource server at once: works at /graphql, aud names both; narrowed, refreshed, refused beyond', async () => {
    const rs = await registerResourceServer('jwt');
    const { config, user } = await clientAndUser();
    const both = await tokens(config, user, [t.url, rs.identifier]);
    const { payload } = await verifyJwt(both.response.access_token, rs.identifier);
    expect(payload.aud).toEqual([t.url, rs.identifier]);
    const res = await graphql(t.url, VIEWER, { bearer: both.response.access_token });
    expect(res.status).toBe(200);
    expect(res.body.data?.viewer).toEqual({ id: user.id });

    // Narrowed at the token endpoint to the resource server alone (RFC 8707 §2.2).
    const narrowed = await tokens(config, user, [t.url, rs.identifier], { resource: rs.identifier });
    expect(decodeJwt(narrowed.response.access_token).aud).toBe(rs.identifier);
    await expectRefusedByApi(narrowed.response.access_token);

    // A refresh keeps every authorized resource, or narrows to one; never one beyond them.
    const refreshed = await client.refreshTokenGrant(config, narrowed.response.refresh_token!);
    expect(decodeJwt(refreshed.access_token).aud).toEqual([t.url, rs.identifier]);
    const toAgora = await client.refreshTokenGrant(config, refreshed.refresh_token!, { resource: t.url });
    expect(toAgora.access_token).toMatch(/^agora_oat_/);
    expect((await graphql(t.url, VIEWER, { bearer: toAgora.access_token })).status).toBe(200);
    const another = await registerResourceServer('jwt');
    await expect(client.refreshTokenGrant(config, toAgora.refresh_token!, { resource: another.identifier })).rejects.toMatchObject({
      error: 'invalid_target',
    });
    // The refused refresh left the token unused.
    const again = await client.refreshTokenGrant(config, toAgora.refresh_token!, { resource: rs.identifier });
    expect(decodeJwt(again.access_token).aud).toBe(rs.identifier);
  });

  it('refuses a resource at the token endpoint that the code was not authorized for, and leaves the code usable', async () => {
    const rs = await registerResourceServer('jwt');
    const other = await registerResourceServer('jwt');
    const { app, config, user } = await clientAndUser();
    const { url, codeVerifier } = await authorizationUrl(config, [rs.identifier]);
    const { callback } = await approve(url, user);
    const code = callback.searchParams.get('code')!;
    const exchange = (resource: string) =>
      tokenRequest(
        new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT_URI,
          code_verifier: codeVerifier,
          client_id: app.clientId,
          client_secret: app.clientSecret,
          resource,
        }),
      );
    for (const beyond of [other.identifier, t.url, 'https://unregistered.example.com']) {
      const refused = await exchange(beyond);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_target');
    }
    const granted = await exchange(rs.identifier);
    expect(granted.status).toBe(200);
    expect(decodeJwt(granted.body.access_token as string).aud).toBe(rs.identifier);
  });

  it('of an opaque-format resource server is opaque: introspected by it, refused by /graphql', async () => {
    const rs = await registerResourceServer('opaque');
    const { config, user } = await clientAndUser();
    const { response } = await tokens(config, user, [rs.identifier]);
    expect(response.access_token).toMatch(/^agora_oat_/);
    await expectRefusedByApi(response.access_token);
    const described = await introspectAs(asServer(rs), response.access_token);
    expect(described.body).toMatchObject({ active: true, aud: rs.identifier, sub: user.id, token_type: 'Bearer' });
  });

  it('is given to a service account that names the resource (client_credentials)', async () => {
    const rs = await registerResourceServer('jwt');
    const owner = await createUserWithToken(t);
    const organizer = await createOrganizer(t, owner.token);
    const { application, clientSecret } = await t
      .get(ApplicationsService)
      .createServiceAccount(idOfType(organizer.id, 'Organizer')!, { name: 'Sync', scopes: ['api'] });
    const request = (resource: string) =>
      tokenRequest(
        new URLSearchParams({ grant_type: 'client_credentials', client_id: application.clientId, client_secret: clientSecret!, resource }),
      );
    const granted = await request(rs.identifier);
    expect(granted.status).toBe(200);
    const { payload } = await verifyJwt(granted.body.access_token as string, rs.identifier);
    expect(payload).toMatchObject({ aud: rs.identifier, sub: application.clientId });
    await expectRefusedByApi(granted.body.access_token as string);
    expect((await introspectAs(asServer(rs), granted.body.access_token as string)).body).toMatchObject({
      active: true,
      sub: application.clientId,
    });
    expect((await request('https://unregistered.example.com')).body.error).toBe('invalid_target');
  });

  it('is approved once: the approval is remembered for that resource server and its scopes, not for another, nor for its identifier registered again', async () => {
    const rs = await registerResourceServer('jwt');
    const other = await registerResourceServer('jwt');
    const { config, user } = await clientAndUser();
    expect((await tokens(config, user, [rs.identifier])).consent).toContain(rs.identifier);
    // The approval mail names the resource server it added.
    const notices = await securityNoticeJobs(t.get(DataSource), user.id);
    expect(notices.at(-1)?.notice).toMatchObject({
      kind: 'application-authorized',
      resourceServers: [expect.stringContaining(rs.identifier)],
    });

    const browser = new Browser(t.url);
    await signIn(browser, user.username, TEST_PASSWORD);
    const silently = async (resources: string[], scope?: string) => {
      const { url } = await authorizationUrl(config, resources, scope);
      url.searchParams.set('prompt', 'none');
      const res = await browser.get(url.pathname + url.search);
      expect(res.status).toBe(302);
      return new URL(res.headers.get('location')!).searchParams;
    };
    // The user's authorized applications name it.
    const listed = await (await browser.get('/account/authorized')).text();
    expect(listed).toContain(`Also for Billing API ${rs.identifier.match(/rs(\d+)-/)![1]}</p>`);
    // Asked for again, with or without Agora's API beside it: the code at once.
    expect((await silently([rs.identifier])).get('code')).toEqual(expect.any(String));
    expect((await silently([t.url, rs.identifier])).get('code')).toEqual(expect.any(String));
    // A scope approved later for Agora's API alone is not approved for the resource server.
    const { url: agoraOnly } = await authorizationUrl(config, [], 'openid profile');
    expect((await approve(agoraOnly, user)).consent).toContain('profile');
    expect((await silently([], 'openid profile')).get('code')).toEqual(expect.any(String));
    expect((await silently([rs.identifier], 'openid profile')).get('error')).toBe('consent_required');
    expect((await silently([rs.identifier], 'openid api')).get('code')).toEqual(expect.any(String));
    // A resource server the user never approved for this application: consent is needed.
    expect((await silently([rs.identifier, other.identifier])).get('error')).toBe('consent_required');
    // Deleted and registered again under its identifier (by anyone): a new resource server, asked about afresh.
    await t.get(ResourceServerDeletion).delete(rs.id);
    await t
      .get(ResourceServersService)
      .create((await createUser(t)).id, { name: 'Billing API again', identifier: rs.identifier, accessTokenFormat: 'jwt' });
    expect((await silently([rs.identifier])).get('error')).toBe('consent_required');
    const again = await tokens(config, user, [rs.identifier]);
    expect(again.consent).toContain('Billing API again');
    expect((await silently([rs.identifier])).get('code')).toEqual(expect.any(String));
    // The deleted one is no longer listed: the one registered again is.
    expect(await (await browser.get('/account/authorized')).text()).toContain('Also for Billing API again</p>');
  });

  it('is inactive at once when revoked, or when its resource server is deleted', async () => {
    const rs = await registerResourceServer('jwt');
    const { app, config, user } = await clientAndUser();
    const first = await tokens(config, user, [rs.identifier]);
    expect((await introspectAs(asServer(rs), first.response.access_token)).body.active).toBe(true);
    await client.tokenRevocation(config, first.response.access_token);
    expect((await introspectAs(asServer(rs), first.response.access_token)).body).toEqual({ active: false });

    const second = await tokens(config, user, [t.url, rs.identifier]);
    expect((await introspectAs(asServer(rs), second.response.access_token)).body.active).toBe(true);
    await t.get(ResourceServerDeletion).delete(rs.id);
    // Its credential no longer authenticates; every token issued for it is revoked, for the client too.
    expect((await introspectAs(asServer(rs), second.response.access_token)).status).toBe(401);
    expect((await introspectAs(asClient(app), second.response.access_token, 'post')).body).toEqual({ active: false });
    await expectRefusedByApi(second.response.access_token);
    await expect(client.refreshTokenGrant(config, second.response.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    // And its identifier is no resource any more.
    const { url } = await authorizationUrl(config, [rs.identifier]);
    const res = await fetch(url, { redirect: 'manual' });
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_target');
  });

  it('answers a wrong resource server secret with 401 invalid_client, and a resource server cannot get or revoke tokens', async () => {
    const rs = await registerResourceServer('jwt');
    const wrong = await introspectAs({ id: rs.introspectionId, secret: `${rs.secret.slice(0, -1)}x` }, 'anything');
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect((await introspectAs({ id: 'rs_00000000000000000000000000000000', secret: rs.secret }, 'x')).status).toBe(401);
    for (const [path, grant] of [
      ['/oauth/token', { grant_type: 'client_credentials' }],
      ['/oauth/revoke', { token: 'x' }],
    ] as const) {
      const res = await fetch(`${t.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...grant, client_id: rs.introspectionId, client_secret: rs.secret }),
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_client');
    }
  });
});

describe('the device flow with resource indicators', () => {
  const deviceToken = (app: RegisteredApp, deviceCode: string, resources: string[] = []) => {
    const fields = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: deviceCode,
      client_id: app.clientId,
      client_secret: app.clientSecret,
    });
    for (const r of resources) fields.append('resource', r);
    return tokenRequest(fields);
  };

  it('issues tokens for the resources the device named, shown on the consent screen; narrows and refuses beyond them', async () => {
    const rs = await registerResourceServer('jwt');
    const other = await registerResourceServer('jwt');
    const { app, user } = await clientAndUser();
    const start = new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, scope: 'openid api offline_access' });
    start.append('resource', rs.identifier);
    start.append('resource', `${t.url}/graphql`);
    const started = await fetch(`${t.url}/oauth/device_authorization`, { method: 'POST', body: start });
    expect(started.status).toBe(200);
    const { device_code: deviceCode, user_code: userCode } = (await started.json()) as { device_code: string; user_code: string };

    const browser = new Browser(t.url);
    expect((await signIn(browser, user.username, TEST_PASSWORD)).status).toBe(303);
    const form = await browser.get(`/oauth/device?user_code=${userCode}`);
    const consent = await browser.post('/oauth/device', formFields(await form.text()));
    const page = await consent.text();
    // The user sees where the token goes, and who registered it, as on the authorization endpoint's page.
    expect(page).toContain('The access will be used at:');
    expect(page).toContain(rs.identifier);
    await browser.submit('/oauth/device', { ...formFields(page), decision: 'approve' });

    // Beyond what the device named: invalid_target, and the device code stays usable.
    expect(await deviceToken(app, deviceCode, [other.identifier])).toMatchObject({ status: 400, body: { error: 'invalid_target' } });
    const narrowed = await deviceToken(app, deviceCode, [rs.identifier]);
    expect(narrowed.status).toBe(200);
    const { payload } = await verifyJwt(narrowed.body.access_token as string, rs.identifier);
    expect(payload.aud).toBe(rs.identifier);
    await expectRefusedByApi(narrowed.body.access_token as string);

    // Its refresh token keeps both resources: a refresh may ask for Agora's API alone.
    const refreshed = await tokenRequest(
      new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: narrowed.body.refresh_token as string,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        resource: t.url,
      }),
    );
    expect(refreshed.status).toBe(200);
    expect((await graphql(t.url, VIEWER, { bearer: refreshed.body.access_token as string })).body.data).toEqual({
      viewer: { id: expect.any(String) },
    });
  });

  it('refuses an unknown resource at the device authorization endpoint with invalid_target', async () => {
    const { app } = await clientAndUser();
    const start = new URLSearchParams({
      client_id: app.clientId,
      client_secret: app.clientSecret,
      scope: 'api',
      resource: 'https://unknown.example.com/api',
    });
    const res = await fetch(`${t.url}/oauth/device_authorization`, { method: 'POST', body: start });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_target' });
  });
});

describe('an unknown resource at the authorization endpoint', () => {
  it('is sent back to the client’s redirect URI with invalid_target, state and iss', async () => {
    const { config } = await clientAndUser();
    const { url, state } = await authorizationUrl(config, ['https://unregistered.example.com/api']);
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(REDIRECT_URI);
    expect(location.searchParams.get('error')).toBe('invalid_target');
    expect(location.searchParams.get('error_description')).toMatch(/Unknown resource/);
    expect(location.searchParams.get('state')).toBe(state);
    expect(location.searchParams.get('iss')).toBe(t.url);
  });
  it('reaches a self-registered client too, through the page with the way back (never a bare error page)', async () => {
    // A self-registered client's redirect URI is its registrant's choice: every answer it did not ask the
    // user for goes through a page with the link (no open redirector), this one included.
    const app = await registerPublicApp(t, null);
    const config = await discoverPublic(t, app.clientId);
    const { url, state } = await authorizationUrl(config, ['https://unregistered.example.com/api'], 'openid api');
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(400);
    const href = /<a class="button" href="([^"]+)"/.exec(await res.text())?.[1]?.replace(/&amp;/g, '&');
    expect(href).toBeDefined();
    const location = new URL(href!);
    expect(location.origin + location.pathname).toBe(REDIRECT_URI);
    expect(location.searchParams.get('error')).toBe('invalid_target');
    expect(location.searchParams.get('state')).toBe(state);
    expect(location.searchParams.get('iss')).toBe(t.url);
  });
});

describe('registering a resource server', () => {
  const service = () => t.get(ResourceServersService);

  it.each([
    ['a fragment', 'https://api.example.com/#x', 'INVALID_IDENTIFIER'],
    ['a query', 'https://api.example.com/?x=1', 'INVALID_IDENTIFIER'],
    ['a relative URI', '/api', 'INVALID_IDENTIFIER'],
    ['http off loopback', 'http://api.example.com', 'INVALID_IDENTIFIER'],
    ['Agora’s own API', 'BASE', 'INVALID_IDENTIFIER'],
    ['an address under Agora', 'BASE/graphql', 'INVALID_IDENTIFIER'],
    ['nothing', '', 'INVALID_IDENTIFIER'],
  ])('refuses an identifier with %s', async (_what, identifier, code) => {
    const owner = await createUser(t);
    await expect(service().create(owner.id, { name: 'X', identifier: identifier.replace('BASE', t.url) })).rejects.toMatchObject({
      code,
      field: 'identifier',
    });
  });

  it('accepts http on a loopback host', async () => {
    const owner = await createUser(t);
    const { resourceServer } = await service().create(owner.id, { name: 'Local', identifier: `http://localhost:${9000 + ++counter}/mcp` });
    expect(resourceServer.accessTokenFormat).toBe('jwt');
  });

  it('refuses a taken identifier, a bad name and a bad format', async () => {
    const rs = await registerResourceServer();
    const owner = await createUser(t);
    await expect(service().create(owner.id, { name: 'Again', identifier: rs.identifier })).rejects.toMatchObject({
      code: 'IDENTIFIER_TAKEN',
    });
    await expect(service().create(owner.id, { name: ' ', identifier: 'https://n1.example.com' })).rejects.toMatchObject({
      code: 'INVALID_NAME',
    });
    await expect(service().create(owner.id, { name: 'x'.repeat(101), identifier: 'https://n2.example.com' })).rejects.toMatchObject({
      code: 'INVALID_NAME',
    });
    await expect(
      service().create(owner.id, { name: 'X', identifier: 'https://n3.example.com', accessTokenFormat: 'paseto' }),
    ).rejects.toMatchObject({ code: 'INVALID_ACCESS_TOKEN_FORMAT' });
  });
});

describe('the Resource servers pages', () => {
  async function signedInBrowser(user: User): Promise<Browser> {
    const browser = new Browser(t.url);
    await signIn(browser, user.username, TEST_PASSWORD);
    return browser;
  }

  async function create(browser: Browser, fields: Record<string, string>): Promise<Response> {
    const form = formFields(await (await browser.get('/resource-servers')).text());
    return browser.post('/resource-servers', { _csrf: form._csrf!, ...fields });
  }

  it('registers one and shows the secret once, regenerates it, deletes it', async () => {
    const user = await createUser(t);
    const browser = await signedInBrowser(user);
    const identifier = `https://pages${++counter}.example.com`;
    const created = await create(browser, { name: 'Pages API', identifier, access_token_format: 'opaque' });
    expect(created.status).toBe(303);
    const location = created.headers.get('location')!;
    const page = await (await browser.get(location)).text();
    const secret = /<code id="introspection-secret" class="secret">(agora_rss_[0-9A-Za-z]+)<\/code\s*>/.exec(page)?.[1];
    const introspectionId = /<code class="url" id="introspection-id">(rs_[0-9a-f]+)<\/code>/.exec(page)?.[1];
    expect(secret).toBeDefined();
    expect(page).toContain(identifier);
    // Shown once.
    expect(await (await browser.get(location)).text()).not.toContain(secret!);
    expect((await introspectAs({ id: introspectionId!, secret: secret! }, 'x')).body).toEqual({ active: false });
    expect(await (await browser.get('/resource-servers')).text()).toContain('Pages API');

    const confirm = await browser.get(`${location}/secret`);
    expect(confirm.status).toBe(200);
    const regenerated = await browser.post(`${location}/secret`, { _csrf: formFields(await confirm.text())._csrf! });
    expect(regenerated.status).toBe(303);
    const newSecret = /<code id="introspection-secret" class="secret">(agora_rss_[0-9A-Za-z]+)<\/code\s*>/.exec(
      await (await browser.get(location)).text(),
    )?.[1];
    expect(newSecret).toBeDefined();
    expect((await introspectAs({ id: introspectionId!, secret: secret! }, 'x')).status).toBe(401);
    expect((await introspectAs({ id: introspectionId!, secret: newSecret! }, 'x')).status).toBe(200);

    const confirmDelete = await browser.get(`${location}/delete`);
    const deleted = await browser.post(`${location}/delete`, { _csrf: formFields(await confirmDelete.text())._csrf! });
    expect(deleted.status).toBe(303);
    expect((await browser.get(location)).status).toBe(404);
    expect((await introspectAs({ id: introspectionId!, secret: newSecret! }, 'x')).status).toBe(401);
  });

  it('shows each bad field beside its input, never a 5xx', async () => {
    const user = await createUser(t);
    const browser = await signedInBrowser(user);
    const res = await create(browser, { name: '', identifier: 'http://api.example.com?x#y', access_token_format: 'nope' });
    expect(res.status).toBe(422);
    const html = await res.text();
    expect(html).toContain('Name must be 1 to 100 characters');
    expect(html).toMatch(/identifier must/i);
    expect(html).toMatch(/access token format must be one of/i);
  });

  it('refuses a user whose e-mail is not verified, the signed-out, another user’s resource server, and a post without CSRF', async () => {
    const rs = await registerResourceServer();
    const unverified = await createUser(t, { verified: false });
    const res = await create(await signedInBrowser(unverified), { name: 'X', identifier: `https://u${++counter}.example.com` });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);

    const anonymous = new Browser(t.url);
    for (const path of ['/resource-servers', `/resource-servers/${rs.id}`]) {
      const page = await anonymous.get(path);
      expect([302, 303]).toContain(page.status);
      expect(page.headers.get('location')).toMatch(/^\/sign-in/);
    }
    const stranger = await signedInBrowser(await createUser(t));
    for (const path of [
      `/resource-servers/${rs.id}`,
      `/resource-servers/${rs.id}/secret`,
      `/resource-servers/${rs.id}/delete`,
      '/resource-servers/not-an-id',
    ]) {
      expect((await stranger.get(path)).status).toBe(404);
    }
    const form = formFields(await (await stranger.get('/resource-servers')).text());
    expect((await stranger.post(`/resource-servers/${rs.id}/delete`, { _csrf: form._csrf! })).status).toBe(404);
    expect((await stranger.post('/resource-servers', { name: 'X', identifier: 'https://nocsrf.example.com' })).status).toBe(403);
    await expect(t.get(ResourceServersService).get(rs.id)).resolves.toMatchObject({ id: rs.id });
  });
});

describe('the resources:* commands', () => {
  it('create (the secret printed once), list (never a secret) and delete a resource server; a bad identifier exits 1', async () => {
    const owner = await createUser(t);
    const identifier = `https://cli${++counter}.example.com/mcp`;
    const created = await runCli(
      t.databaseEnv,
      'resources:create',
      '--user',
      owner.username,
      '--name',
      'CLI API',
      '--identifier',
      identifier,
      '--access-token-format',
      'opaque',
    );
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({ identifier, name: 'CLI API', accessTokenFormat: 'opaque', owner: owner.username });
    expect(created.json.introspectionId).toMatch(/^rs_[0-9a-f]{32}$/);
    expect(created.json.introspectionSecret).toMatch(/^agora_rss_/);

    const again = await runCli(t.databaseEnv, 'resources:create', '--user', owner.username, '--name', 'X', '--identifier', identifier);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already registered/);
    // The CLI reads BASE_URL from its environment, as the server does.
    const underAgora = await runCli(
      { ...t.databaseEnv, BASE_URL: t.url },
      'resources:create',
      '--user',
      owner.username,
      '--name',
      'X',
      '--identifier',
      `${t.url}/graphql`,
    );
    expect(underAgora.code).toBe(1);

    const listed = await runCli(t.databaseEnv, 'resources:list', '--user', owner.username);
    expect(listed.code).toBe(0);
    expect(listed.json.resourceServers).toEqual([expect.objectContaining({ id: created.json.id, identifier })]);
    expect(listed.stdout).not.toContain('agora_rss_');

    const deleted = await runCli(t.databaseEnv, 'resources:delete', '--id', created.json.id);
    expect(deleted.code).toBe(0);
    expect((await runCli(t.databaseEnv, 'resources:list', '--user', owner.username)).json.resourceServers).toEqual([]);
  });
});
