import * as client from 'openid-client';
import { DataSource } from 'typeorm';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { createUser } from './support/fixtures.js';
import { approveInBrowser, authorizationRequest } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ OAUTH_DYNAMIC_REGISTRATION: 'true', OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK: '1000' });
});
afterAll(() => t.close());

const CALLBACK = 'http://localhost:4000/callback';

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, any> | null;
}

async function call(method: string, url: string, token?: string, body?: unknown): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: {
      ...(token !== undefined && { authorization: `Bearer ${token}` }),
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, any>) : null };
}

async function registered(metadata: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await call('POST', `${t.url}/oauth/register`, undefined, {
    client_name: 'Managed client',
    redirect_uris: [CALLBACK],
    scope: 'openid api',
    ...metadata,
  });
  expect(res.status).toBe(201);
  return res.body!;
}

function expectInvalidToken(res: Answer): void {
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toBe('Bearer realm="agora", error="invalid_token"');
  expect(res.body).toEqual({ error: 'invalid_token', error_description: expect.any(String) });
}

describe('dynamic client registration management (RFC 7592)', () => {
  it('gives a registration access token, shown once and stored hashed, and the client configuration endpoint', async () => {
    const info = await registered();
    expect(info.registration_access_token).toMatch(/^agora_rat_[0-9A-Za-z]{49}$/);
    expect(info.registration_client_uri).toBe(`${t.url}/oauth/register/${info.client_id}`);
    const [row] = (await t
      .get(DataSource)
      .query('SELECT registration_access_token_hash FROM oauth_applications WHERE client_id = $1', [info.client_id])) as {
      registration_access_token_hash: string;
    }[];
    expect(row!.registration_access_token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(info.registration_access_token);
  });

  it('reads the registration (GET) without the secret or the token', async () => {
    const info = await registered({ token_endpoint_auth_method: 'client_secret_post' });
    const read = await call('GET', info.registration_client_uri, info.registration_access_token);
    expect(read.status).toBe(200);
    expect(read.headers.get('cache-control')).toBe('no-store');
    expect(read.body).toEqual({
      client_id: info.client_id,
      client_id_issued_at: info.client_id_issued_at,
      registration_client_uri: info.registration_client_uri,
      client_name: 'Managed client',
      redirect_uris: [CALLBACK],
      post_logout_redirect_uris: [],
      grant_types: expect.arrayContaining(['authorization_code']),
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
      scope: 'openid api',
      id_token_signed_response_alg: 'RS256',
      access_token_format: 'opaque',
      subject_type: 'public',
    });
  });

  it('replaces the registration (PUT): every field as sent, omitted ones back to their defaults, checked as at registration', async () => {
    const info = await registered({
      post_logout_redirect_uris: ['http://localhost:4000/bye'],
      id_token_signed_response_alg: 'ES256',
      access_token_format: 'jwt',
      client_uri: 'https://app.example/',
      logo_uri: 'https://app.example/logo.png',
      client_description: 'Syncs registrations',
    });
    expect(info).toMatchObject({ id_token_signed_response_alg: 'ES256', access_token_format: 'jwt', client_uri: 'https://app.example/' });
    const put = (body: Record<string, unknown>) => call('PUT', info.registration_client_uri, info.registration_access_token, body);
    const updated = await put({
      client_id: info.client_id,
      client_name: 'Renamed client',
      redirect_uris: ['http://localhost:4000/other'],
      scope: 'api',
      // The server's own fields, echoed back from a read, are ignored.
      registration_client_uri: info.registration_client_uri,
      client_id_issued_at: info.client_id_issued_at,
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      client_id: info.client_id,
      client_name: 'Renamed client',
      redirect_uris: ['http://localhost:4000/other'],
      post_logout_redirect_uris: [],
      scope: 'api',
      id_token_signed_response_alg: 'RS256',
      access_token_format: 'opaque',
    });
    for (const member of ['client_uri', 'logo_uri', 'client_description']) expect(updated.body).not.toHaveProperty(member);
    expect((await call('GET', info.registration_client_uri, info.registration_access_token)).body).toMatchObject({
      client_name: 'Renamed client',
      post_logout_redirect_uris: [],
    });
    // The secret still works, and may be sent if it is the client's.
    const withSecret = await put({ client_id: info.client_id, client_secret: info.client_secret, redirect_uris: [CALLBACK] });
    expect(withSecret.status).toBe(200);
    expect(withSecret.body).toMatchObject({ client_name: 'Unnamed application', scope: 'openid api' });

    const refusals: [Record<string, unknown>, string, RegExp][] = [
      [{ redirect_uris: [CALLBACK] }, 'invalid_request', /client_id/],
      [{ client_id: 'someone-else', redirect_uris: [CALLBACK] }, 'invalid_request', /client_id/],
      [{ client_id: info.client_id, client_secret: 'agora_ocs_wrong', redirect_uris: [CALLBACK] }, 'invalid_request', /client_secret/],
      [{ client_id: info.client_id }, 'invalid_redirect_uri', /redirect_uris/],
      [{ client_id: info.client_id, redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri', /redirect_uris/],
      [{ client_id: info.client_id, redirect_uris: [CALLBACK], scope: 'root' }, 'invalid_client_metadata', /scope/],
      [
        { client_id: info.client_id, redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' },
        'invalid_client_metadata',
        /cannot change/,
      ],
    ];
    for (const [body, error, description] of refusals) {
      const res = await put(body);
      expect([res.status, res.body]).toEqual([400, { error, error_description: expect.stringMatching(description) }]);
    }
    const notJson = await fetch(info.registration_client_uri, {
      method: 'PUT',
      headers: { authorization: `Bearer ${info.registration_access_token}`, 'content-type': 'application/json' },
      body: '{nope',
    });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: string }).error).toBe('invalid_client_metadata');
  });

  it('deletes the registration (DELETE): its tokens stop working and so does the registration access token', async () => {
    const info = await registered();
    const user = await createUser(t);
    const config = await client.discovery(new URL(t.url), info.client_id, undefined, client.ClientSecretBasic(info.client_secret), {
      execute: [client.allowInsecureRequests],
    });
    const { url, codeVerifier, state, nonce } = await authorizationRequest(config, 'openid api');
    const tokens = await client.authorizationCodeGrant(config, new URL(await approveInBrowser(t, url, user)), {
      pkceCodeVerifier: codeVerifier,
      expectedState: state,
      expectedNonce: nonce,
    });
    const me = () =>
      fetch(`${t.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ viewer { id } }' }),
      });
    expect((await me()).status).toBe(200);

    const deleted = await call('DELETE', info.registration_client_uri, info.registration_access_token);
    expect([deleted.status, deleted.body]).toEqual([204, null]);
    expect((await me()).status).toBe(401);
    expectInvalidToken(await call('GET', info.registration_client_uri, info.registration_access_token));
    const exchange = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
        client_id: info.client_id,
        client_secret: info.client_secret,
      }),
    });
    expect(exchange.status).toBe(401);
  });

  it('answers 401 invalid_token for a missing, malformed, wrong or another client’s token, and for an unknown client', async () => {
    const mine = await registered();
    const theirs = await registered();
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const body = method === 'PUT' ? { client_id: mine.client_id, redirect_uris: [CALLBACK] } : undefined;
      expectInvalidToken(await call(method, mine.registration_client_uri, undefined, body));
      expectInvalidToken(await call(method, mine.registration_client_uri, 'agora_rat_wrong', body));
      expectInvalidToken(await call(method, mine.registration_client_uri, theirs.registration_access_token, body));
      expectInvalidToken(await call(method, `${t.url}/oauth/register/unknown-client`, mine.registration_access_token, body));
      const basic = await fetch(mine.registration_client_uri, {
        method,
        headers: { authorization: `Basic ${btoa(`${mine.client_id}:${mine.client_secret}`)}` },
      });
      expect(basic.status).toBe(401);
    }
    // Neither client was changed nor deleted by any of that.
    expect((await call('GET', mine.registration_client_uri, mine.registration_access_token)).status).toBe(200);
    expect((await call('GET', theirs.registration_client_uri, theirs.registration_access_token)).status).toBe(200);
  });

  it('stops working once an operator gives the application to a user: the owner manages it from then on', async () => {
    const info = await registered();
    expect((await call('GET', info.registration_client_uri, info.registration_access_token)).status).toBe(200);
    const owner = await createUser(t);
    const application = (await t.get(ApplicationsService).findByClientId(info.client_id))!;
    await t.get(ApplicationsService).claim(application.id, owner.id);
    expectInvalidToken(await call('GET', info.registration_client_uri, info.registration_access_token));
    const put = await call('PUT', info.registration_client_uri, info.registration_access_token, {
      client_id: info.client_id,
      redirect_uris: ['http://localhost:4000/attacker'],
    });
    expectInvalidToken(put);
    expect((await t.get(ApplicationsService).findByClientId(info.client_id))!.redirectUris).toEqual([CALLBACK]);
  });

  it('is only for clients that registered themselves: a dashboard application has no registration access token', async () => {
    const owner = await createUser(t);
    const { application, registrationAccessToken } = await t
      .get(ApplicationsService)
      .create(owner.id, { name: 'Dashboard app', redirectUris: [CALLBACK], scopes: ['api'] });
    expect(registrationAccessToken).toBeUndefined();
    expect(application.selfManaged).toBe(false);
    const info = await registered();
    expect((await t.get(ApplicationsService).getByClientIdOrId(info.client_id)).selfManaged).toBe(true);
  });
});
