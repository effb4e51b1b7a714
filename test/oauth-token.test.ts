import { createHash, randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { AuthorizationCodesService } from '../src/oauth/authorize/authorization-codes.service.js';
import { UsersService } from '../src/users/users.service.js';
import { createUser, createUserWithToken } from './support/fixtures.js';
import { eventually } from './support/eventually.js';
import { graphql } from './support/http.js';
import { REDIRECT_URI, registerApp, RegisteredApp } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';
import type { User } from '../src/users/user.model.js';

let t: TestApp;
let user: User;
let app: RegisteredApp;
let other: RegisteredApp;

beforeAll(async () => {
  t = await startTestApp();
  user = await createUser(t);
  const owner = await createUser(t);
  app = await registerApp(t, owner.id);
  other = await registerApp(t, owner.id);
});
afterAll(() => t.close());

/** A code as the authorization endpoint would issue it after consent. */
async function issueCode(
  options: { client?: RegisteredApp; scopes?: string[]; forUser?: User } = {},
): Promise<{ code: string; verifier: string }> {
  const client = options.client ?? app;
  const verifier = randomBytes(32).toString('base64url');
  const application = (await t.get(ApplicationsService).findByClientId(client.clientId))!;
  const code = await t.get(AuthorizationCodesService).issue(
    {
      application,
      redirectUri: REDIRECT_URI,
      scopes: options.scopes ?? ['openid', 'api'],
      codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
      nonce: 'n-1',
    },
    (options.forUser ?? user).id,
    { authTime: t.clock.now(), amr: ['pwd'] },
  );
  return { code, verifier };
}

function tokenRequest(form: Record<string, string>, init: { headers?: Record<string, string>; raw?: string; contentType?: string } = {}) {
  return fetch(`${t.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': init.contentType ?? 'application/x-www-form-urlencoded', ...init.headers },
    body: init.raw ?? new URLSearchParams(form).toString(),
  });
}

function exchangeForm(code: string, verifier: string, client = app): Record<string, string> {
  return {
    grant_type: 'authorization_code',
    client_id: client.clientId,
    client_secret: client.clientSecret,
    redirect_uri: REDIRECT_URI,
    code,
    code_verifier: verifier,
  };
}

async function expectOAuthError(res: Response, status: number, error: string): Promise<void> {
  expect(res.status).toBe(status);
  expect(res.headers.get('cache-control')).toBe('no-store');
  const body = (await res.json()) as Record<string, string>;
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
  expect(body.error).toBe(error);
}

describe('token endpoint errors (RFC 6749 §5.2)', () => {
  it('unknown client → 401 invalid_client with a Basic challenge', async () => {
    const { code, verifier } = await issueCode();
    const res = await tokenRequest({ ...exchangeForm(code, verifier), client_id: 'nobody' });
    await expectOAuthError(res, 401, 'invalid_client');
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic/);
  });

  it('wrong secret → 401 invalid_client, by post or by Basic', async () => {
    const { code, verifier } = await issueCode();
    await expectOAuthError(
      await tokenRequest({ ...exchangeForm(code, verifier), client_secret: 'agora_ocs_wrong' }),
      401,
      'invalid_client',
    );
    const { client_secret: _s, client_id: _c, ...rest } = exchangeForm(code, verifier);
    const basic = Buffer.from(`${app.clientId}:wrong`).toString('base64');
    await expectOAuthError(await tokenRequest(rest, { headers: { authorization: `Basic ${basic}` } }), 401, 'invalid_client');
  });

  it('no client authentication → 401 invalid_client', async () => {
    const { code, verifier } = await issueCode();
    const { client_secret: _s, ...rest } = exchangeForm(code, verifier);
    await expectOAuthError(await tokenRequest(rest), 401, 'invalid_client');
  });

  it('Basic and client_secret at once → 400 invalid_request', async () => {
    const { code, verifier } = await issueCode();
    const basic = Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(app.clientSecret)}`).toString('base64');
    await expectOAuthError(
      await tokenRequest(exchangeForm(code, verifier), { headers: { authorization: `Basic ${basic}` } }),
      400,
      'invalid_request',
    );
  });

  it.each(['grant_type', 'code', 'redirect_uri'])('missing %s → 400 invalid_request', async (name) => {
    const { code, verifier } = await issueCode();
    const form = exchangeForm(code, verifier);
    delete form[name];
    await expectOAuthError(await tokenRequest(form), 400, 'invalid_request');
  });

  it('another grant_type → 400 unsupported_grant_type', async () => {
    await expectOAuthError(await tokenRequest({ ...exchangeForm('x', 'y'), grant_type: 'password' }), 400, 'unsupported_grant_type');
    // client_credentials is supported, for service accounts only (test/oauth-client-credentials.test.ts).
    await expectOAuthError(await tokenRequest({ ...exchangeForm('x', 'y'), grant_type: 'client_credentials' }), 400, 'unauthorized_client');
  });

  it('a parameter given twice → 400 invalid_request', async () => {
    const { code, verifier } = await issueCode();
    const raw = `${new URLSearchParams(exchangeForm(code, verifier)).toString()}&code=${code}`;
    await expectOAuthError(await tokenRequest({}, { raw }), 400, 'invalid_request');
  });

  it('another content type → 400 invalid_request', async () => {
    await expectOAuthError(
      await tokenRequest({}, { raw: 'grant_type=authorization_code', contentType: 'text/plain' }),
      400,
      'invalid_request',
    );
  });

  it.each([
    ['an unknown code', async () => ({ ...exchangeForm('unknown-code-value', 'a'.repeat(43)) })],
    [
      'a redirect_uri that differs',
      async () => ({
        ...(await issueCode().then(({ code, verifier }) => exchangeForm(code, verifier))),
        redirect_uri: `${REDIRECT_URI}?x=1`,
      }),
    ],
    [
      'no code_verifier',
      async () => {
        const { code_verifier: _v, ...form } = await issueCode().then(({ code, verifier }) => exchangeForm(code, verifier));
        return form;
      },
    ],
    [
      'a malformed code_verifier',
      async () => ({ ...(await issueCode().then(({ code, verifier }) => exchangeForm(code, verifier))), code_verifier: 'short' }),
    ],
    [
      'a wrong code_verifier',
      async () => ({ ...(await issueCode().then(({ code, verifier }) => exchangeForm(code, verifier))), code_verifier: 'b'.repeat(43) }),
    ],
    [
      'a code issued to another client',
      async () => {
        const { code, verifier } = await issueCode({ client: app });
        return exchangeForm(code, verifier, other);
      },
    ],
  ])('%s → 400 invalid_grant', async (_name, form) => {
    await expectOAuthError(await tokenRequest(await form()), 400, 'invalid_grant');
  });

  it('an expired code → 400 invalid_grant (OAUTH_CODE_TTL_SECONDS, 60 by default)', async () => {
    const fresh = await issueCode();
    const stale = await issueCode();
    t.clock.advance(59_000);
    expect((await tokenRequest(exchangeForm(fresh.code, fresh.verifier))).status).toBe(200);
    t.clock.advance(2_000);
    await expectOAuthError(await tokenRequest(exchangeForm(stale.code, stale.verifier)), 400, 'invalid_grant');
  });
});

describe('authorization codes are single-use', () => {
  it('a wrong code_verifier uses the code up: the right one is refused after it, and nothing issued works', async () => {
    const { code, verifier } = await issueCode();
    await expectOAuthError(await tokenRequest({ ...exchangeForm(code, verifier), code_verifier: 'c'.repeat(43) }), 400, 'invalid_grant');
    await expectOAuthError(await tokenRequest(exchangeForm(code, verifier)), 400, 'invalid_grant');
    const [row] = await t
      .get(DataSource)
      .query(
        'SELECT c.consumed_at, t.revoked_at FROM oauth_authorization_codes c JOIN oauth_access_tokens t ON t.id = c.access_token_id WHERE c.code_hash = $1',
        [createHash('sha256').update(code).digest('hex')],
      );
    expect(row.consumed_at).not.toBeNull();
    expect(row.revoked_at).not.toBeNull();
  });

  it('a code presented by another client is left for its own client', async () => {
    const { code, verifier } = await issueCode({ client: app });
    await expectOAuthError(await tokenRequest(exchangeForm(code, verifier, other)), 400, 'invalid_grant');
    expect((await tokenRequest(exchangeForm(code, verifier, app))).status).toBe(200);
  });

  it('rejects a reused code and revokes the access token issued from it', async () => {
    const { code, verifier } = await issueCode();
    const first = await tokenRequest(exchangeForm(code, verifier));
    expect(first.status).toBe(200);
    const { access_token } = (await first.json()) as { access_token: string };
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: access_token })).status).toBe(200);

    await expectOAuthError(await tokenRequest(exchangeForm(code, verifier)), 400, 'invalid_grant');
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: access_token })).status).toBe(401);
  });

  it('of 20 concurrent redemptions of one code, exactly one succeeds', async () => {
    const { code, verifier } = await issueCode();
    const responses = await Promise.all(Array.from({ length: 20 }, () => tokenRequest(exchangeForm(code, verifier))));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(19);
  });
});

describe('access tokens', () => {
  async function accessToken(scopes?: string[], client = app): Promise<string> {
    const { code, verifier } = await issueCode({ scopes, client });
    return ((await (await tokenRequest(exchangeForm(code, verifier, client))).json()) as { access_token: string }).access_token;
  }

  it('expire after 3600 seconds', async () => {
    const token = await accessToken();
    t.clock.advance(3_599_000);
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: token })).status).toBe(200);
    t.clock.advance(2_000);
    const res = await graphql(t.url, '{ viewer { id } }', { bearer: token });
    expect(res.status).toBe(401);
    expect(res.text).toBe('{"message":"401 Unauthorized"}');
  });

  it('are refused in Private-Token (personal tokens only)', async () => {
    expect((await graphql(t.url, '{ viewer { id } }', { privateToken: await accessToken() })).status).toBe(401);
  });

  it('without api or read_api get 403 on the API', async () => {
    const res = await graphql(t.url, '{ viewer { id } }', { bearer: await accessToken(['openid', 'profile']) });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="api read_api", resource_metadata="${t.url}/.well-known/oauth-protected-resource/graphql"`,
    );
  });

  it('of a blocked user stop working', async () => {
    const blocked = await createUser(t);
    const { code, verifier } = await issueCode({ forUser: blocked });
    const { access_token } = (await (await tokenRequest(exchangeForm(code, verifier))).json()) as { access_token: string };
    await t.get(UsersService).setState(blocked.username, 'blocked');
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: access_token })).status).toBe(401);
  });

  it('stop working when their application is deleted', async () => {
    const doomed = await registerApp(t, user.id);
    const token = await accessToken(['api'], doomed);
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: token })).status).toBe(200);
    await t.get(ApplicationsService).delete(doomed.applicationId);
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: token })).status).toBe(401);
  });

  it('need openid for userinfo', async () => {
    const withoutOpenid = await fetch(`${t.url}/oauth/userinfo`, { headers: { authorization: `Bearer ${await accessToken(['api'])}` } });
    expect(withoutOpenid.status).toBe(403);
    const { token: pat } = await createUserWithToken(t);
    expect((await fetch(`${t.url}/oauth/userinfo`, { headers: { authorization: `Bearer ${pat}` } })).status).toBe(403);
    const ok = await fetch(`${t.url}/oauth/userinfo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await accessToken(['openid'])}` },
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ sub: user.id });
  });
});

describe('revocation (RFC 7009) and introspection (RFC 7662)', () => {
  function clientPost(path: string, form: Record<string, string>, client = app) {
    return fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams(form).toString(),
    });
  }
  async function accessToken(): Promise<string> {
    const { code, verifier } = await issueCode();
    return ((await (await tokenRequest(exchangeForm(code, verifier))).json()) as { access_token: string }).access_token;
  }

  it('introspects an active token for its own client', async () => {
    const token = await accessToken();
    const res = await clientPost('/oauth/introspect', { token });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      active: true,
      scope: 'openid api',
      client_id: app.clientId,
      username: user.username,
      sub: user.id,
      token_type: 'Bearer',
      iss: t.url,
    });
    expect((body.exp as number) - (body.iat as number)).toBe(3600);
  });

  it('says only active:false about another client’s or an unknown token', async () => {
    const token = await accessToken();
    expect(await (await clientPost('/oauth/introspect', { token }, other)).json()).toEqual({ active: false });
    expect(await (await clientPost('/oauth/introspect', { token: 'agora_oat_nothing' })).json()).toEqual({ active: false });
  });

  it('revokes a token: the API refuses it on the next request and introspection says inactive', async () => {
    const token = await accessToken();
    const res = await clientPost('/oauth/revoke', { token, token_type_hint: 'access_token' });
    expect(res.status).toBe(200);
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: token })).status).toBe(401);
    expect(await (await clientPost('/oauth/introspect', { token })).json()).toEqual({ active: false });
  });

  it('answers 200 for unknown tokens, and leaves another client’s token alone', async () => {
    expect((await clientPost('/oauth/revoke', { token: 'agora_oat_unknown' })).status).toBe(200);
    const token = await accessToken();
    expect((await clientPost('/oauth/revoke', { token }, other)).status).toBe(200);
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: token })).status).toBe(200);
  });

  it('require client authentication', async () => {
    const res = await fetch(`${t.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'token=x',
    });
    await expectOAuthError(res, 401, 'invalid_client');
    const intro = await fetch(`${t.url}/oauth/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'token=x',
    });
    await expectOAuthError(intro, 401, 'invalid_client');
  });
});

describe('client secrets', () => {
  it('stop working when rotated; the new one works', async () => {
    const rotating = await registerApp(t, user.id);
    // Used once first, so that the client is in the credential cache.
    const first = await issueCode({ client: rotating });
    expect((await tokenRequest(exchangeForm(first.code, first.verifier, rotating))).status).toBe(200);
    const { clientSecret } = await t.get(ApplicationsService).rotateSecret(rotating.applicationId);
    const { code, verifier } = await issueCode({ client: rotating });
    await expectOAuthError(await tokenRequest(exchangeForm(code, verifier, rotating)), 401, 'invalid_client');
    expect((await tokenRequest(exchangeForm(code, verifier, { ...rotating, clientSecret }))).status).toBe(200);
  });

  it('stop working when changed outside this instance (another instance, the CLI, an operator’s SQL)', async () => {
    const changed = await registerApp(t, user.id);
    const first = await issueCode({ client: changed });
    expect((await tokenRequest(exchangeForm(first.code, first.verifier, changed))).status).toBe(200);
    const newSecret = `agora_ocs_${randomBytes(32).toString('base64url')}`;
    await t
      .get(DataSource)
      .query('UPDATE oauth_applications SET client_secret_hash = $1 WHERE id = $2', [
        createHash('sha256').update(newSecret).digest('hex'),
        changed.applicationId,
      ]);
    // The change reaches this instance's cache as a notification (on the embedded database, before
    // the UPDATE answers; on a PostgreSQL server, shortly after): give it a moment.
    await eventually(async () => {
      const { code, verifier } = await issueCode({ client: changed });
      expect((await tokenRequest(exchangeForm(code, verifier, changed))).status).toBe(401);
    }, 5000);
    const { code, verifier } = await issueCode({ client: changed });
    expect((await tokenRequest(exchangeForm(code, verifier, { ...changed, clientSecret: newSecret }))).status).toBe(200);
  });
});
