import { auth, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { createUser } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { McpHostOAuthProvider } from './support/mcp-host.js';
import { startTestApp, TestApp } from './support/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ OAUTH_DYNAMIC_REGISTRATION: 'true' });
});
afterAll(() => t.close());

describe('an MCP client (@modelcontextprotocol/sdk)', () => {
  it('discovers Agora from a 401, registers itself, signs the user in with PKCE and calls the API', async () => {
    const user = await createUser(t);
    const serverUrl = new URL(`${t.url}/graphql`);
    const requests: string[] = [];
    let tokenRequest: URLSearchParams | undefined;
    const fetchFn = (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : input);
      requests.push(`${init?.method ?? 'GET'} ${url.pathname}`);
      if (url.pathname === '/oauth/token') tokenRequest = new URLSearchParams(init?.body as URLSearchParams);
      return fetch(input, init);
    };

    // The API's 401 says where its protected resource metadata is (RFC 9728 §5.1).
    const refused = await fetch(serverUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { id } }' }),
    });
    expect(refused.status).toBe(401);
    // The metadata of /graphql itself (RFC 9728 §3.1), and the scope to ask for, a refresh token included.
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(refused);
    expect(resourceMetadataUrl?.href).toBe(`${t.url}/.well-known/oauth-protected-resource/graphql`);
    expect(scope).toBe('api offline_access');

    const provider = new McpHostOAuthProvider(t, user, { clientName: 'MCP test client', grantTypes: ['authorization_code'] });
    expect(await auth(provider, { serverUrl, resourceMetadataUrl, scope, fetchFn })).toBe('REDIRECT');
    // RFC 9728, then RFC 8414, then RFC 7591.
    expect(requests).toEqual([
      'GET /.well-known/oauth-protected-resource/graphql',
      'GET /.well-known/oauth-authorization-server',
      'POST /oauth/register',
    ]);

    // Registered as a public client owned by nobody, with the scope the challenge named.
    expect(provider.client).toMatchObject({ token_endpoint_auth_method: 'none', scope: 'api offline_access' });
    expect(provider.client).not.toHaveProperty('client_secret');
    const application = (await t.get(ApplicationsService).findByClientId(provider.client!.client_id))!;
    expect(application).toMatchObject({ ownerId: null, clientType: 'public', name: 'MCP test client' });

    // The authorization request: PKCE S256 and the resource indicator (RFC 8707) the metadata named.
    const authorizationUrl = provider.authorizations[0]!;
    const params = authorizationUrl.searchParams;
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${t.url}/oauth/authorize`);
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('resource')).toBe(`${t.url}/graphql`);
    expect(params.get('scope')).toBe('api offline_access');

    const callback = provider.callback!;
    expect(callback.origin + callback.pathname).toBe(provider.redirectUrl);
    expect(callback.searchParams.get('iss')).toBe(t.url);
    const code = callback.searchParams.get('code')!;
    expect(await auth(provider, { serverUrl, resourceMetadataUrl, authorizationCode: code, fetchFn })).toBe('AUTHORIZED');
    expect(requests.at(-1)).toBe('POST /oauth/token');
    // A public client: its id, no secret; the code verifier; the same resource indicator.
    expect(Object.fromEntries(tokenRequest!)).toEqual({
      grant_type: 'authorization_code',
      code,
      code_verifier: provider.verifier,
      redirect_uri: provider.redirectUrl,
      client_id: provider.client!.client_id,
      resource: `${t.url}/graphql`,
    });
    expect(provider.saved).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'api offline_access' });
    // offline_access: a refresh token, so the host need not send the user back to the browser every hour.
    expect(provider.saved?.refresh_token).toMatch(/^agora_/);

    const viewer = await graphql(t.url, '{ viewer { id username } }', { bearer: provider.saved!.access_token });
    expect(viewer.status).toBe(200);
    expect(viewer.body.data?.viewer).toEqual({ id: user.id, username: user.username });
  });
});
