import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { RegistrationQuotas1796100000000 } from '../src/database/migrations/1796100000000-registration-quotas.js';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { AuthorizationCodesService } from '../src/oauth/authorize/authorization-codes.service.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, createUserWithToken, TEST_PASSWORD } from './support/fixtures.js';
import { registerApp, registerPublicApp } from './support/oauth.js';
import { runCli } from './support/processes.js';
import { startTestApp, TestApp } from './support/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ OAUTH_DYNAMIC_REGISTRATION: 'true' });
});
afterAll(() => t.close());

let port = 41000;
/** A fresh https origin, so that tests do not see each other's registrations. */
function freshOrigin(): string {
  return `https://spa-${port++}.example.com`;
}

async function publicAppOn(origin: string, ownerId?: string) {
  const owner = ownerId ?? (await createUser(t)).id;
  return registerPublicApp(t, owner, { redirectUris: [`${origin}/callback`] });
}

function preflight(path: string, origin: string, method = 'POST') {
  return fetch(`${t.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' },
  });
}

const ENDPOINTS: [string, string][] = [
  ['POST', '/oauth/token'],
  ['GET', '/oauth/userinfo'],
  ['POST', '/oauth/userinfo'],
  ['POST', '/oauth/revoke'],
  ['POST', '/graphql'],
];

/** Public documents and registration: any origin, with `*` (never credentials). */
const PUBLIC_ENDPOINTS: [string, string][] = [
  ['GET', '/.well-known/openid-configuration'],
  ['GET', '/.well-known/oauth-authorization-server'],
  ['GET', '/.well-known/oauth-protected-resource'],
  ['GET', '/.well-known/oauth-protected-resource/graphql'],
  ['GET', '/oauth/discovery/keys'],
  ['POST', '/oauth/register'],
];

function call(method: string, path: string, headers: Record<string, string>) {
  const body =
    method === 'GET' ? undefined : path === '/graphql' ? JSON.stringify({ query: '{ __typename }' }) : new URLSearchParams({ token: 'x' });
  return fetch(`${t.url}${path}`, {
    method,
    headers: { ...(path === '/graphql' && method === 'POST' ? { 'content-type': 'application/json' } : {}), ...headers },
    body,
  });
}

describe('CORS for single-page apps (public clients)', () => {
  it.each(ENDPOINTS)('%s %s: a registered origin gets its own origin back, no credentials, exposed headers', async (method, path) => {
    const origin = freshOrigin();
    await publicAppOn(origin);
    const res = await call(method, path, { origin });
    expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('vary')).toMatch(/Origin/);
    expect(res.headers.get('access-control-expose-headers')).toMatch(/WWW-Authenticate/);
    expect(res.headers.get('access-control-expose-headers')).toMatch(/X-RateLimit-Remaining/);
    // Reading the response cross-origin must not be blocked by the resource policy either: CORP is
    // not applied to CORS requests, and the browser test reads these bodies for real.
    const pre = await preflight(path, origin, method);
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe(origin);
    expect(pre.headers.get('access-control-allow-methods')).toContain(method);
    expect(pre.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type, Mcp-Protocol-Version, Mcp-Session-Id');
    expect(Number(pre.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    expect(pre.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it.each(ENDPOINTS)('%s %s: a foreign origin gets no CORS header, and its preflight is answered 204 without one', async (method, path) => {
    const res = await call(method, path, { origin: 'https://attacker.example' });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('vary')).toMatch(/Origin/);
    const pre = await preflight(path, 'https://attacker.example', method);
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    expect(pre.headers.get('access-control-allow-methods')).toBeNull();
  });

  it.each(PUBLIC_ENDPOINTS)(
    '%s %s: any origin may read it (`*`, no credentials), as a browser-based MCP client must before it registers',
    async (method, path) => {
      const origin = 'https://inspector.example';
      const res = await fetch(`${t.url}${path}`, {
        method,
        headers: { origin, 'content-type': 'application/json' },
        body:
          method === 'POST'
            ? JSON.stringify({
                client_name: 'Browser MCP client',
                redirect_uris: ['http://localhost:6274/oauth/callback'],
                token_endpoint_auth_method: 'none',
              })
            : undefined,
      });
      expect(res.status).toBe(method === 'POST' ? 201 : 200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      const pre = await preflight(path, origin, method);
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('*');
      expect(pre.headers.get('access-control-allow-methods')).toBe(method);
      expect(pre.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type, Mcp-Protocol-Version, Mcp-Session-Id');
      expect(pre.headers.get('access-control-allow-credentials')).toBeNull();
    },
  );

  it('leaves a request without Origin as it was', async () => {
    const res = await fetch(`${t.url}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(((await res.json()) as { issuer: string }).issuer).toBeDefined();
  });

  it("allows only public clients' origins: a confidential client's redirect URI allows nothing", async () => {
    const owner = await createUser(t);
    await registerApp(t, owner.id); // http://localhost:4000/callback, confidential
    const res = await call('POST', '/oauth/token', { origin: 'http://localhost:4000' });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('never on the authorization endpoint, the pages or the sign-in form', async () => {
    const origin = freshOrigin();
    await publicAppOn(origin);
    for (const path of ['/oauth/authorize', '/applications', '/sign-in', '/', '/api/v1/events', '/metrics']) {
      const res = await fetch(`${t.url}${path}`, { headers: { origin }, redirect: 'manual' });
      expect([path, res.headers.get('access-control-allow-origin')]).toEqual([path, null]);
      const pre = await preflight(path, origin, 'GET');
      expect([path, pre.headers.get('access-control-allow-origin')]).toEqual([path, null]);
    }
    // A method the endpoint does not have gets nothing either.
    const res = await fetch(`${t.url}/oauth/token`, { method: 'GET', headers: { origin } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('allows a loopback IP registered without a port on any port, and only there', async () => {
    await registerPublicApp(t, (await createUser(t)).id, { redirectUris: ['http://[::1]/callback'] });
    for (const origin of ['http://[::1]:50123', 'http://[::1]:8080']) {
      const res = await call('POST', '/oauth/token', { origin });
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    }
    const other = await call('POST', '/oauth/token', { origin: 'http://127.0.0.2:50123' });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers the SPA with the error body it can read: invalid_client for an unknown client, 401 with WWW-Authenticate on the API', async () => {
    const origin = freshOrigin();
    await publicAppOn(origin);
    const token = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', code_verifier: 'y'.repeat(43), client_id: 'nope' }),
    });
    expect(token.status).toBe(401);
    expect(token.headers.get('access-control-allow-origin')).toBe(origin);
    expect(((await token.json()) as { error: string }).error).toBe('invalid_client');
    const api = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json', authorization: 'Bearer agoa_nothing' },
      body: JSON.stringify({ query: '{ viewer { id } }' }),
    });
    expect(api.headers.get('access-control-allow-origin')).toBe(origin);
  });

  it('exchanges a code and calls the API cross-origin with the token, the session cookie never needed', async () => {
    const origin = freshOrigin();
    const user = await createUser(t);
    const app = await publicAppOn(origin);
    const verifier = randomBytes(32).toString('base64url');
    const application = (await t.get(ApplicationsService).findByClientId(app.clientId))!;
    const code = await t.get(AuthorizationCodesService).issue(
      {
        application,
        redirectUri: `${origin}/callback`,
        scopes: ['api'],
        codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
        nonce: null,
      } as never,
      user.id,
      { authTime: t.clock.now(), amr: ['pwd'] },
    );
    const res = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: app.clientId,
        redirect_uri: `${origin}/callback`,
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    const { access_token } = (await res.json()) as { access_token: string };
    const api = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json', authorization: `Bearer ${access_token}` },
      body: JSON.stringify({ query: '{ viewer { id } }' }),
    });
    expect(api.headers.get('access-control-allow-origin')).toBe(origin);
    expect(((await api.json()) as { data: { viewer: { id: string } } }).data.viewer.id).toBe(user.id);
  });

  it('forgets an origin as soon as the redirect URI naming it changes, and learns a new one at once', async () => {
    const before = freshOrigin();
    const after = freshOrigin();
    const owner = await createUser(t);
    const app = await publicAppOn(before, owner.id);
    // Cached now.
    expect((await call('POST', '/graphql', { origin: before })).headers.get('access-control-allow-origin')).toBe(before);
    expect((await call('POST', '/graphql', { origin: after })).headers.get('access-control-allow-origin')).toBeNull();
    await t.get(ApplicationsService).update(app.applicationId, owner.id, {
      name: 'Moved',
      redirectUris: [`${after}/callback`],
      scopes: ['api'],
    });
    expect((await call('POST', '/graphql', { origin: before })).headers.get('access-control-allow-origin')).toBeNull();
    expect((await call('POST', '/graphql', { origin: after })).headers.get('access-control-allow-origin')).toBe(after);
    await t.get(ApplicationsService).delete(app.applicationId, owner.id);
    expect((await call('POST', '/graphql', { origin: after })).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('forgets an origin changed by SQL behind the service (the change notification)', async () => {
    const origin = freshOrigin();
    const app = await publicAppOn(origin);
    expect((await call('POST', '/graphql', { origin })).headers.get('access-control-allow-origin')).toBe(origin);
    await t
      .get(DataSource)
      .query(`UPDATE oauth_applications SET redirect_uris = ARRAY['https://elsewhere.example/cb'] WHERE id = $1`, [app.applicationId]);
    // Heard before the UPDATE returns on the embedded database; on a server, within the revocation bound.
    let allowed: string | null = origin;
    for (let i = 0; i < 40 && allowed !== null; i++) {
      allowed = (await call('POST', '/graphql', { origin })).headers.get('access-control-allow-origin');
      if (allowed !== null) await sleep(50);
    }
    expect(allowed).toBeNull();
  });

  it('does not let a personal token holder or session use CORS with credentials: no Allow-Credentials anywhere', async () => {
    const origin = freshOrigin();
    await publicAppOn(origin);
    const { token } = await createUserWithToken(t);
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: '{ viewer { id } }' }),
    });
    expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });
});

describe('CORS for a public client that registered itself (RFC 7591)', () => {
  async function selfRegistered(origin: string): Promise<string> {
    const res = await fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Self SPA', redirect_uris: [`${origin}/callback`], token_endpoint_auth_method: 'none' }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { client_id: string }).client_id;
  }

  const allowed = async (origin: string) => (await preflight('/oauth/token', origin)).headers.get('access-control-allow-origin');

  it('does not trust its origin until a user consents to it, then at once', async () => {
    const origin = freshOrigin();
    const clientId = await selfRegistered(origin);
    expect(await allowed(origin)).toBeNull();
    expect((await call('POST', '/graphql', { origin })).headers.get('access-control-allow-origin')).toBeNull();

    const user = await createUser(t);
    const browser = new Browser(t.url);
    await signIn(browser, user.username, TEST_PASSWORD);
    const authorize = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: `${origin}/callback`,
      scope: 'api',
      state: 'st',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const consent = await browser.get(`/oauth/authorize?${authorize}`);
    expect(consent.status).toBe(200);
    // Showing the consent page trusts nothing yet.
    expect(await allowed(origin)).toBeNull();
    const decided = await browser.post('/oauth/authorize', { ...formFields(await consent.text()), decision: 'approve' });
    expect(decided.status).toBeLessThan(400);
    expect(await allowed(origin)).toBe(origin);
  });

  it('does not trust its origin until an operator claims it, then at once', async () => {
    const origin = freshOrigin();
    const clientId = await selfRegistered(origin);
    expect(await allowed(origin)).toBeNull();
    const owner = await createUser(t);
    const claimed = await runCli(t.databaseEnv, 'apps:claim', '--id', clientId, '--user', owner.username);
    expect(claimed.code).toBe(0);
    // The claim was made by another process: this instance learns it from the change notification.
    let seen = null;
    for (let i = 0; i < 50 && seen === null; i++) {
      seen = await allowed(origin);
      if (seen === null) await sleep(100);
    }
    expect(seen).toBe(origin);
  });

  /** Signs a new user in and approves `clientId` on the consent page; the browser stays signed in. */
  async function consent(clientId: string, origin: string): Promise<{ browser: Browser; authorize: URLSearchParams }> {
    const user = await createUser(t);
    const browser = new Browser(t.url);
    await signIn(browser, user.username, TEST_PASSWORD);
    const authorize = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: `${origin}/callback`,
      scope: 'api',
      state: 'st',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const page = await browser.get(`/oauth/authorize?${authorize}`);
    expect(page.status).toBe(200);
    const decided = await browser.post('/oauth/authorize', { ...formFields(await page.text()), decision: 'approve' });
    expect(decided.status).toBe(302);
    return { browser, authorize };
  }

  /** The application's row, by client id. */
  async function row(clientId: string): Promise<{ id: string; first_consented_at: Date | null }> {
    const [found] = (await t
      .get(DataSource)
      .query('SELECT id, first_consented_at FROM oauth_applications WHERE client_id = $1', [clientId])) as {
      id: string;
      first_consented_at: Date | null;
    }[];
    return found!;
  }

  /** CORS as this instance sees it once it has heard every change notification (at once on the embedded database). */
  async function settled(origin: string, expected: string | null): Promise<string | null> {
    let seen = await allowed(origin);
    for (let i = 0; i < 50 && seen !== expected; i++) {
      await sleep(100);
      seen = await allowed(origin);
    }
    return seen;
  }

  it('records the first consent on the service clock, not the database clock', async () => {
    t.clock.advance(3 * 86_400_000);
    const origin = freshOrigin();
    const clientId = await selfRegistered(origin);
    await consent(clientId, origin);
    const consentedAt = (await row(clientId)).first_consented_at!;
    expect(Math.abs(consentedAt.getTime() - t.clock.now().getTime())).toBeLessThan(60_000);
  });

  it('trusts it again when a user is sent through consent they already gave, if its first consent was not recorded', async () => {
    const origin = freshOrigin();
    const clientId = await selfRegistered(origin);
    const { browser, authorize } = await consent(clientId, origin);
    expect(await allowed(origin)).toBe(origin);
    // A grant without a recorded first consent (as one made before the column existed).
    await t.get(DataSource).query('UPDATE oauth_applications SET first_consented_at = NULL WHERE client_id = $1', [clientId]);
    expect(await settled(origin, null)).toBeNull();

    // The earlier grant covers the scopes: approved without asking, and that records the consent.
    const again = await browser.get(`/oauth/authorize?${authorize}`);
    expect(again.status).toBe(302);
    expect(again.headers.get('location')).toMatch(new RegExp(`^${origin}/callback\\?code=`));
    expect((await row(clientId)).first_consented_at).not.toBeNull();
    expect(await allowed(origin)).toBe(origin);
  });

  it('keeps trusting, after the upgrade, an application users consented to before it: the migration fills first_consented_at in', async () => {
    const consentedBefore = freshOrigin();
    const never = freshOrigin();
    const consentedId = await selfRegistered(consentedBefore);
    const neverId = await selfRegistered(never);
    const { id } = await row(consentedId);
    const user = await createUser(t);
    const consentedAt = new Date('2026-01-02T03:04:05.000Z');

    const migration = new RegistrationQuotas1796100000000();
    const runner = t.get(DataSource).createQueryRunner();
    try {
      await migration.down(runner);
      // A consent as the code before the migration recorded it: a grant, nothing on the application.
      await runner.query(
        `INSERT INTO oauth_grants (user_id, application_id, scopes, created_at, updated_at) VALUES ($1, $2, '{api}', $3, $3)`,
        [user.id, id, consentedAt],
      );
      await migration.up(runner);
    } finally {
      await runner.release();
    }

    expect((await row(consentedId)).first_consented_at).toEqual(consentedAt);
    expect((await row(neverId)).first_consented_at).toBeNull();
    // No CORS request since the last registration, so this instance loads its origins afresh, as at start-up.
    expect(await allowed(consentedBefore)).toBe(consentedBefore);
    expect(await allowed(never)).toBeNull();
  });
});
