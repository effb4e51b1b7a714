import * as oauth from 'oauth4webapi';
import { createUser, createUserWithToken } from './support/fixtures.js';
import { graphql, rest } from './support/http.js';
import { Browser } from './support/browser.js';
import { issueCode, registerApp, REDIRECT_URI } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const CLIENT_AUTH = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'];
const ASSERTION_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA'];

/** What RFC 8414 and OpenID Connect Discovery both say, with registration off (the default). */
function sharedMetadata(base: string) {
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    jwks_uri: `${base}/oauth/discovery/keys`,
    revocation_endpoint: `${base}/oauth/revoke`,
    introspection_endpoint: `${base}/oauth/introspect`,
    device_authorization_endpoint: `${base}/oauth/device_authorization`,
    scopes_supported: ['api', 'read_api', 'openid', 'profile', 'email', 'offline_access'],
    response_types_supported: ['code'],
    response_modes_supported: ['query', 'form_post'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code', 'client_credentials'],
    token_endpoint_auth_methods_supported: CLIENT_AUTH,
    token_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    revocation_endpoint_auth_methods_supported: CLIENT_AUTH,
    revocation_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    introspection_endpoint_auth_methods_supported: CLIENT_AUTH,
    introspection_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
  };
}

async function json(path: string): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const res = await fetch(`${t.url}${path}`);
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

const resourceMetadata = () => `${t.url}/.well-known/oauth-protected-resource`;

describe('authorization server metadata', () => {
  it('serves RFC 8414 metadata at /.well-known/oauth-authorization-server, exactly what is supported', async () => {
    const res = await json('/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.body).toEqual(sharedMetadata(t.url));
  });

  it('serves the same in the OpenID Connect document, plus what only OpenID Connect has', async () => {
    const res = await json('/.well-known/openid-configuration');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...sharedMetadata(t.url),
      userinfo_endpoint: `${t.url}/oauth/userinfo`,
      end_session_endpoint: `${t.url}/oauth/logout`,
      subject_types_supported: ['public', 'pairwise'],
      id_token_signing_alg_values_supported: ['RS256', 'ES256', 'EdDSA'],
      claims_supported: [
        'iss',
        'sub',
        'aud',
        'exp',
        'iat',
        'auth_time',
        'nonce',
        'amr',
        'acr',
        'sid',
        'name',
        'preferred_username',
        'email',
        'email_verified',
      ],
      acr_values_supported: ['aal1', 'aal2', 'phr'],
      prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      claims_parameter_supported: false,
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
    });
  });

  it('lists no registration endpoint while dynamic registration is off, which answers 404 like no route', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      expect((await json(path)).body).not.toHaveProperty('registration_endpoint');
    }
    const register = await fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['https://app.example/cb'] }),
    });
    const noRoute = await fetch(`${t.url}/oauth/no-such-endpoint`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(register.status).toBe(404);
    expect(noRoute.status).toBe(404);
    expect(((await register.json()) as { message: string }).message).toBe(((await noRoute.json()) as { message: string }).message);
  });
});

describe('protected resource metadata (RFC 9728)', () => {
  const graphqlMetadata = () => `${t.url}/.well-known/oauth-protected-resource/graphql`;

  it('describes the API as a whole and points at this issuer', async () => {
    const res = await json('/.well-known/oauth-protected-resource');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.body).toEqual({
      resource: t.url,
      authorization_servers: [t.url],
      scopes_supported: ['api', 'read_api', 'offline_access'],
      bearer_methods_supported: ['header'],
      resource_name: 'Agora API',
      resource_documentation: `${t.url}/explorer`,
    });
  });

  it('describes /graphql at the path-inserted address, its resource exactly the address a client calls (§3.1, §3.3)', async () => {
    const res = await json('/.well-known/oauth-protected-resource/graphql');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      resource: `${t.url}/graphql`,
      authorization_servers: [t.url],
      scopes_supported: ['api', 'read_api', 'offline_access'],
      bearer_methods_supported: ['header'],
      resource_name: 'Agora API (/graphql)',
      resource_documentation: `${t.url}/explorer`,
    });
    for (const unknown of ['/.well-known/oauth-protected-resource/nothing', '/.well-known/oauth-protected-resource/api']) {
      expect((await json(unknown)).status).toBe(404);
    }
  });

  it('is named in WWW-Authenticate on every 401 and 403 of /graphql (its own document), with the scope to ask for and the contract bodies', async () => {
    const anonymous = await graphql(t.url, '{ viewer { id } }');
    expect(anonymous.status).toBe(401);
    expect(anonymous.text).toBe('{"message":"401 Unauthorized"}');
    expect(anonymous.headers.get('www-authenticate')).toBe(`Bearer scope="api offline_access", resource_metadata="${graphqlMetadata()}"`);

    const invalid = await graphql(t.url, '{ viewer { id } }', { bearer: 'agora_oat_not-a-token' });
    expect(invalid.status).toBe(401);
    expect(invalid.text).toBe('{"message":"401 Unauthorized"}');
    expect(invalid.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", scope="api offline_access", resource_metadata="${graphqlMetadata()}"`,
    );

    const { token } = await createUserWithToken(t, ['read_api']);
    const forbidden = await graphql(t.url, 'mutation { updateViewerProfile(input: { name: "x" }) { user { id } } }', { bearer: token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ message: '403 Forbidden', error: 'insufficient_scope' });
    expect(forbidden.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="api", resource_metadata="${graphqlMetadata()}"`,
    );
  });

  it('names the API’s document on the REST API, and no scope on UserInfo (an OpenID Connect endpoint)', async () => {
    const anonymous = await rest(t.url, 'GET', '/api/user');
    expect(anonymous.status).toBe(401);
    expect(anonymous.text).toBe('{"message":"401 Unauthorized"}');
    expect(anonymous.headers.get('www-authenticate')).toBe(`Bearer scope="api offline_access", resource_metadata="${resourceMetadata()}"`);

    const { token } = await createUserWithToken(t, ['read_api']);
    const forbidden = await rest(t.url, 'POST', '/api/organizers', { bearer: token, body: { slug: 'meta-ro', name: 'Read only' } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ message: '403 Forbidden', error: 'insufficient_scope' });
    expect(forbidden.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="api", resource_metadata="${resourceMetadata()}"`,
    );

    const userinfo = await fetch(`${t.url}/oauth/userinfo`);
    expect(userinfo.status).toBe(401);
    expect(userinfo.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${resourceMetadata()}"`);
  });

  it('leads a client from a 401 of /graphql to the authorization server metadata, through a document for /graphql', async () => {
    const challenge = (await graphql(t.url, '{ viewer { id } }')).headers.get('www-authenticate')!;
    const url = /resource_metadata="([^"]+)"/.exec(challenge)![1]!;
    const resource = (await (await fetch(url)).json()) as { resource: string; authorization_servers: string[] };
    expect(resource.resource).toBe(`${t.url}/graphql`);
    const [issuer] = resource.authorization_servers;
    const metadata = (await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json()) as { issuer: string };
    expect(metadata.issuer).toBe(issuer);
  });

  it('passes oauth4webapi’s strict discovery (RFC 9728 §3.3) for the API and for /graphql', async () => {
    for (const resource of [t.url, `${t.url}/graphql`]) {
      const response = await oauth.resourceDiscoveryRequest(new URL(resource), { [oauth.allowInsecureRequests]: true });
      const metadata = await oauth.processResourceDiscoveryResponse(new URL(resource), response);
      expect(metadata.resource).toBe(resource);
      expect(metadata.authorization_servers).toEqual([t.url]);
      expect(metadata.scopes_supported).toContain('offline_access');
    }
  });
});

describe('resource indicators (RFC 8707)', () => {
  function authorizeUrl(clientId: string, resource: string): string {
    return `/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      scope: 'api',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      state: 's-1',
      resource,
    })}`;
  }

  it('sends an authorization request for another resource back with invalid_target', async () => {
    const app = await registerApp(t, (await createUser(t)).id);
    const res = await new Browser(t.url).get(authorizeUrl(app.clientId, 'https://elsewhere.example/api'));
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({ error: 'invalid_target', state: 's-1', iss: t.url });
  });

  it('lets an authorization request for this API go on to sign-in', async () => {
    const app = await registerApp(t, (await createUser(t)).id);
    for (const resource of [t.url, `${t.url}/graphql`]) {
      const res = await new Browser(t.url).get(authorizeUrl(app.clientId, resource));
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toMatch(/^\/sign-in\?/);
    }
  });

  it('refuses a token request for another resource with invalid_target, and accepts this API', async () => {
    const user = await createUser(t);
    const app = await registerApp(t, (await createUser(t)).id);
    const request = async (resource: string) => {
      const { code, verifier } = await issueCode(t, app, user.id);
      return fetch(`${t.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT_URI,
          code_verifier: verifier,
          client_id: app.clientId,
          client_secret: app.clientSecret,
          resource,
        }),
      });
    };
    const refused = await request('https://elsewhere.example/');
    expect(refused.status).toBe(400);
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_target');
    const accepted = await request(t.url);
    expect(accepted.status).toBe(200);
    const { access_token } = (await accepted.json()) as { access_token: string };
    expect((await graphql(t.url, '{ viewer { id } }', { bearer: access_token })).body.data?.viewer).toEqual({ id: user.id });
  });
});
