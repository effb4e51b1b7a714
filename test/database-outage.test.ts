import { generateSecret, SecretPrefix } from '../src/auth/secret-token.js';
import { Browser, signIn } from './support/browser.js';
import { createTestDatabase, serverUrl, TestDatabase } from './support/database.js';
import { createUser, createUserWithToken, TEST_PASSWORD } from './support/fixtures.js';
import { get, graphql, rest } from './support/http.js';
import { registerApp } from './support/oauth.js';
import { proxyDatabase, TcpProxy } from './support/tcp-proxy.js';
import { startTestApp, TestApp } from './support/test-app.js';

// A database outage needs a database server to lose: the embedded database lives in the process.
const onServer = serverUrl() ? describe : describe.skip;

onServer('while the database cannot be reached', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let t: TestApp;
  let token: string;
  let client: { clientId: string; clientSecret: string };
  let browser: Browser;
  let jwksBefore: unknown;

  beforeAll(async () => {
    db = await createTestDatabase();
    let viaProxy: string;
    ({ proxy, url: viaProxy } = await proxyDatabase(db.env.DATABASE_URL!));
    t = await startTestApp({ DATABASE_CONNECT_TIMEOUT_SECONDS: '1' }, { databaseEnv: { DATABASE_URL: viaProxy } });
    ({ token } = await createUserWithToken(t, ['api', 'read_api']));
    const owner = await createUser(t);
    client = await registerApp(t, owner.id);
    browser = new Browser(t.url);
    expect((await signIn(browser, owner.username, TEST_PASSWORD)).status).toBe(303);
    jwksBefore = (await get(t.url, '/oauth/discovery/keys')).body;
    await proxy.cut();
  });

  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await db?.drop();
  });

  const retryAfter = (res: { headers: Headers }) => res.headers.get('retry-after');

  it('answers GraphQL with HTTP 503, Retry-After and a SERVICE_UNAVAILABLE error, anonymous or with a token', async () => {
    for (const credentials of [{}, { privateToken: token }]) {
      const res = await graphql(t.url, '{ events(first: 1) { nodes { id } } }', credentials);
      expect(res.status).toBe(503);
      expect(retryAfter(res)).toBe('5');
      expect(res.body.errors?.map((e) => e.extensions?.code)).toEqual(['SERVICE_UNAVAILABLE']);
      expect(res.text).not.toMatch(/ECONNREFUSED|Connection terminated|stack/i);
    }
  });

  it('answers the token endpoint and userinfo with OAuth temporarily_unavailable', async () => {
    const res = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: 'http://localhost:4000/callback',
        code_verifier: 'a'.repeat(43),
        client_id: client.clientId,
        client_secret: client.clientSecret,
      }),
    });
    expect(res.status).toBe(503);
    expect(retryAfter(res)).toBe('5');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });

    const userinfo = await get(t.url, '/oauth/userinfo', { bearer: generateSecret(SecretPrefix.oauthAccessToken) });
    expect(userinfo.status).toBe(503);
    expect(userinfo.body).toMatchObject({ error: 'temporarily_unavailable' });
  });

  it('answers the REST API with 503 and its status message', async () => {
    const res = await rest(t.url, 'GET', '/api/events');
    expect(res.status).toBe(503);
    expect(retryAfter(res)).toBe('5');
    expect(res.body).toEqual({ message: '503 Service Unavailable' });
  });

  it('answers the MCP endpoint with 503, Retry-After and a JSON-RPC error, not a tool result', async () => {
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        'private-token': token,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'find_events', arguments: {} } }),
    });
    expect(res.status).toBe(503);
    expect(retryAfter(res)).toBe('5');
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'The service is unavailable: try again shortly.' },
      id: null,
    });
  });

  it('answers pages with a 503 page', async () => {
    for (const path of ['/account', `/oauth/authorize?client_id=${client.clientId}&response_type=code`]) {
      const res = await browser.get(path);
      expect(res.status).toBe(503);
      expect(retryAfter(res)).toBe('5');
      expect(await res.text()).toContain('Temporarily unavailable');
    }
  });

  it('keeps answering liveness, discovery and JWKS from memory, even for a probe that sends a token; readiness says 503', async () => {
    for (const credentials of [{}, { privateToken: token }, { bearer: 'not-a-token' }]) {
      expect((await get(t.url, '/healthz', credentials)).status).toBe(200);
      expect((await get(t.url, '/.well-known/openid-configuration', credentials)).status).toBe(200);
      const jwks = await get(t.url, '/oauth/discovery/keys', credentials);
      expect(jwks.status).toBe(200);
      expect(jwks.body).toEqual(jwksBefore);
      const ready = await get(t.url, '/readyz', credentials);
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'unavailable', database: 'unreachable' });
    }
  });

  it('logs the outage once per interval, not once per request, and no request as a failure', async () => {
    await Promise.all(Array.from({ length: 20 }, () => rest(t.url, 'GET', '/api/events')));
    const warnings = t.logs.filter((l) => String(l.msg).startsWith('Database unavailable'));
    expect(warnings).toHaveLength(1);
    expect(t.logs.filter((l) => l.level === 50)).toEqual([]);
  });

  it('recovers as soon as the database is back', async () => {
    await proxy.restore();
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await graphql(t.url, '{ viewer { id } }', { privateToken: token })).status;
      if (status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
    expect((await get(t.url, '/readyz')).status).toBe(200);
    expect((await rest(t.url, 'GET', '/api/events')).status).toBe(200);
    expect((await browser.get('/account')).status).toBe(200);
  });
});
