import { GraphQLSchemaHost } from '@nestjs/graphql';
import { parse } from 'graphql';
import { operationCost } from '../src/graphql/operation-analysis.js';
import { rateLimitPoints } from '../src/graphql/operation-policy.plugin.js';
import { PersonalTokensService } from '../src/personal-tokens/personal-tokens.service.js';
import { UsersService } from '../src/users/users.service.js';
import { createUser, createUserWithToken } from './support/fixtures.js';
import { ApiResponse, get, graphql, rest } from './support/http.js';
import { issueCode, REDIRECT_URI, registerApp, RegisteredApp, registerPublicApp } from './support/oauth.js';
import { parseMetrics, valueOf } from './support/prometheus.js';
import { startTestApp, TestApp } from './support/test-app.js';

const METRICS_TOKEN = 'metrics-token-Qw8Zr3Lk5Vn1Xc7Bp2Hd9Ty4Mg6Fs0Ja';

interface Budget {
  limit: number;
  remaining: number;
  used: number;
  reset: number;
}

/** The `X-RateLimit-*` headers of a response; every one of them must be there. */
function budgetOf(res: Pick<ApiResponse, 'headers'>): Budget {
  const read = (name: string) => {
    const value = res.headers.get(`x-ratelimit-${name}`);
    expect(value).toMatch(/^\d+$/);
    return Number(value);
  };
  return { limit: read('limit'), remaining: read('remaining'), used: read('used'), reset: read('reset') };
}

describe('API rate limits (in memory, one instance)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({
      RATE_LIMIT_POINTS: '8',
      RATE_LIMIT_ANONYMOUS_POINTS: '5',
      RATE_LIMIT_OAUTH_TOKEN_REQUESTS: '2',
      RATE_LIMIT_WINDOW_SECONDS: '3',
      // Budgets this small need queries this cheap (a budget must cover the costliest query allowed).
      GRAPHQL_MAX_COST: '800',
      GRAPHQL_ANONYMOUS_MAX_COST: '500',
      METRICS_TOKEN,
    });
  });
  afterAll(() => t.close());

  /** Moves the clock past the window, so that each test starts with whole budgets. */
  beforeEach(() => t.clock.advance(3100));

  it('charges anonymous GraphQL and REST requests to one budget per address, then answers 429 with Retry-After in each shape', async () => {
    const responses = [
      await graphql(t.url, '{ rateLimit { budget limit cost used remaining resetAt } }'),
      await get(t.url, '/api/events'),
      await graphql(t.url, '{ events(first: 1) { nodes { id } } }'),
      await get(t.url, '/api/events'),
      await graphql(t.url, '{ __typename }'),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(responses.map((r) => budgetOf(r).remaining)).toEqual([4, 3, 2, 1, 0]);
    expect(responses.map((r) => budgetOf(r).used)).toEqual([1, 2, 3, 4, 5]);
    for (const r of responses) expect(budgetOf(r).limit).toBe(5);

    const first = (responses[0]!.body.data as { rateLimit: { resetAt: string } }).rateLimit;
    expect(first).toEqual({ budget: 'ADDRESS', limit: 5, cost: 1, used: 1, remaining: 4, resetAt: expect.any(String) });
    const reset = budgetOf(responses[0]!).reset;
    expect(Math.ceil(Date.parse(first.resetAt) / 1000)).toBe(reset);
    expect(reset * 1000 - t.clock.now().getTime()).toBeGreaterThan(0);
    expect(reset * 1000 - t.clock.now().getTime()).toBeLessThanOrEqual(3000 + 1000);

    const refusedGraphql = await graphql(t.url, '{ __typename }');
    expect(refusedGraphql.status).toBe(429);
    expect(budgetOf(refusedGraphql)).toMatchObject({ limit: 5, remaining: 0, used: 5 });
    expect(Number(refusedGraphql.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refusedGraphql.headers.get('retry-after'))).toBeLessThanOrEqual(3);
    expect(refusedGraphql.body.data).toBeUndefined();
    expect(refusedGraphql.body.errors).toEqual([
      { message: expect.stringMatching(/rate limit exceeded/), extensions: { code: 'RATE_LIMITED' } },
    ]);

    const refusedRest = await get(t.url, '/api/events');
    expect(refusedRest.status).toBe(429);
    expect(refusedRest.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(budgetOf(refusedRest).remaining).toBe(0);
    expect(refusedRest.body).toEqual({ message: '429 Too Many Requests', error: expect.stringMatching(/rate limit exceeded/) });
  });

  it('gives the budget back whole when the window ends', async () => {
    for (let i = 0; i < 5; i++) expect((await get(t.url, '/api/events')).status).toBe(200);
    expect((await get(t.url, '/api/events')).status).toBe(429);
    t.clock.advance(3100);
    const again = await get(t.url, '/api/events');
    expect(again.status).toBe(200);
    expect(budgetOf(again)).toMatchObject({ limit: 5, remaining: 4, used: 1 });
  });

  it('charges every personal token of a user to one budget: more tokens never buy more requests', async () => {
    const one = await createUserWithToken(t, ['api']);
    const two = await createUserWithToken(t, ['api']);
    const more = [];
    for (const name of ['second', 'third'])
      more.push((await t.get(PersonalTokensService).create(one.user.id, { name, scopes: ['api'] })).token);
    const tokens = [one.token, ...more];
    for (let i = 0; i < 5; i++) await get(t.url, '/api/events');
    expect((await get(t.url, '/api/events')).status).toBe(429);

    const asOne = await graphql(t.url, '{ viewer { id } rateLimit { budget limit remaining } }', { privateToken: one.token });
    expect(asOne.status).toBe(200);
    expect(asOne.body.data!.rateLimit).toEqual({ budget: 'USER', limit: 8, remaining: 7 });
    expect(budgetOf(asOne)).toMatchObject({ limit: 8, remaining: 7, used: 1 });
    // Each of the user's three tokens spends the one budget, GraphQL and REST alike.
    const remaining = [];
    for (let i = 0; i < 7; i++) {
      const res = await get(t.url, '/api/user', { privateToken: tokens[i % tokens.length]! });
      expect(res.status).toBe(200);
      remaining.push(budgetOf(res).remaining);
    }
    expect(remaining).toEqual([6, 5, 4, 3, 2, 1, 0]);
    for (const token of tokens) {
      const spent = await get(t.url, '/api/user', { privateToken: token });
      expect(spent.status).toBe(429);
      expect(budgetOf(spent)).toMatchObject({ limit: 8, remaining: 0, used: 8 });
      expect(spent.body).toEqual({ message: '429 Too Many Requests', error: expect.any(String) });
    }
    // A token made now joins the spent budget.
    const fresh = (await t.get(PersonalTokensService).create(one.user.id, { name: 'fourth', scopes: ['api'] })).token;
    expect((await graphql(t.url, '{ __typename }', { privateToken: fresh })).status).toBe(429);

    const asTwo = await get(t.url, '/api/user', { privateToken: two.token });
    expect(asTwo.status).toBe(200);
    expect(budgetOf(asTwo)).toMatchObject({ limit: 8, remaining: 7 });
  });

  it('charges an MCP request 1 point of its user’s budget, and answers 429 as a JSON-RPC error', async () => {
    const { token } = await createUserWithToken(t, ['api']);
    const mcp = () =>
      fetch(`${t.url}/mcp`, {
        method: 'POST',
        headers: { 'private-token': token, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const remaining = [];
    for (let i = 0; i < 8; i++) {
      const res = await mcp();
      expect(res.status).toBe(200);
      remaining.push(budgetOf(res).remaining);
    }
    expect(remaining).toEqual([7, 6, 5, 4, 3, 2, 1, 0]);
    const spent = await mcp();
    expect(spent.status).toBe(429);
    expect(Number(spent.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await spent.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: expect.stringMatching(/rate limit exceeded/) },
      id: null,
    });
  });

  it('charges a GraphQL operation its query cost / 100, and does not count one it refuses', async () => {
    const { token, user } = await createUserWithToken(t, ['api']);
    const schema = t.get(GraphQLSchemaHost).schema;
    const costly = '{ events(first: 100) { nodes { id title organizer { name } } } rateLimit { cost used remaining } }';
    const points = rateLimitPoints(operationCost(schema, parse(costly), undefined, undefined));
    // 1 + 100 × (nodes 1 + id 1 + title 1 + organizer { name } 2) = 501 cost points: 6 rate-limit points.
    expect(points).toBe(6);

    const res = await graphql(t.url, costly, { privateToken: token });
    expect(res.status).toBe(200);
    expect(res.body.data!.rateLimit).toEqual({ cost: 6, used: 6, remaining: 2 });
    expect(budgetOf(res)).toMatchObject({ used: 6, remaining: 2 });
    expect(budgetOf(await graphql(t.url, '{ viewer { id } }', { privateToken: token }))).toMatchObject({ used: 7, remaining: 1 });

    // 6 points with 1 left: refused, and that 1 stays spendable by a cheaper request.
    const refused = await graphql(t.url, costly, { privateToken: token });
    expect(refused.status).toBe(429);
    expect(refused.body.errors![0]!.message).toMatch(/costs 6 of 8 points per window, 1 remain/);
    expect(budgetOf(refused)).toMatchObject({ used: 7, remaining: 1 });
    const cheap = await graphql(t.url, '{ viewer { id } }', { privateToken: token });
    expect(cheap.status).toBe(200);
    expect(budgetOf(cheap)).toMatchObject({ used: 8, remaining: 0 });
    expect((await graphql(t.url, '{ viewer { id } }', { privateToken: token })).status).toBe(429);
    // A refused mutation is not run.
    const mutation = await graphql(t.url, 'mutation { updateViewerProfile(input: { name: "Renamed" }) { user { name } } }', {
      privateToken: token,
    });
    expect(mutation.status).toBe(429);
    expect(mutation.body.data).toBeUndefined();
    expect((await t.get(UsersService).findActiveByUsername(user.username))!.name).not.toBe('Renamed');
  });

  it('charges a request refused for its credentials, or one that does not parse, 1 point of the address budget', async () => {
    const bad = await get(t.url, '/api/user', { privateToken: 'agora_pat_not-a-token' });
    expect(bad.status).toBe(401);
    expect(budgetOf(bad)).toMatchObject({ limit: 5, used: 1 });
    const badGraphql = await graphql(t.url, '{ viewer { id } }', { bearer: 'not-a-token' });
    expect(badGraphql.status).toBe(401);
    expect(budgetOf(badGraphql).used).toBe(2);
    const anonymousViewer = await graphql(t.url, '{ viewer { id } }');
    expect(anonymousViewer.status).toBe(401);
    expect(budgetOf(anonymousViewer).used).toBe(3);
    const unparsable = await graphql(t.url, '{ viewer { id }');
    expect(unparsable.status).toBe(200);
    expect(unparsable.body.errors![0]!.extensions!.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(budgetOf(unparsable).used).toBe(4);
    await get(t.url, '/api/user', { privateToken: 'agora_pat_still-not-a-token' });
    // A flood of bad tokens is refused like any other once the address has spent its budget.
    const flooded = await get(t.url, '/api/user', { privateToken: 'agora_pat_and-another' });
    expect(flooded.status).toBe(429);
    expect(flooded.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  describe('the OAuth token endpoint', () => {
    let user: { id: string };
    let client: RegisteredApp;
    let other: RegisteredApp;

    beforeAll(async () => {
      user = await createUser(t);
      client = await registerApp(t, user.id);
      other = await registerApp(t, user.id);
    });

    async function redeem(app: RegisteredApp, secret = app.clientSecret, scopes?: string[]): Promise<Response> {
      const { code, verifier } = await issueCode(t, app, user.id, scopes);
      return fetch(`${t.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          code_verifier: verifier,
          redirect_uri: REDIRECT_URI,
          client_id: app.clientId,
          client_secret: secret,
        }),
      });
    }

    it('limits each authenticated client on its own, in the OAuth error shape', async () => {
      // A caller without the secret spends nothing of the client's budget.
      for (let i = 0; i < 3; i++) expect((await redeem(client, 'wrong-secret')).status).toBe(401);
      const first = await redeem(client);
      expect(first.status).toBe(200);
      expect(budgetOf(first)).toMatchObject({ limit: 2, remaining: 1, used: 1 });
      expect((await redeem(client)).status).toBe(200);

      const refused = await redeem(client);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(refused.headers.get('cache-control')).toBe('no-store');
      expect(await refused.json()).toEqual({
        error: 'too_many_requests',
        error_description: expect.stringMatching(/try again in \d+ seconds/),
      });

      expect((await redeem(other)).status).toBe(200);
      const scrape = parseMetrics(
        await (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text(),
      );
      expect(valueOf(scrape, 'agora_rate_limited_total', { budget: 'client' })).toBeGreaterThanOrEqual(1);
    });

    /** A revocation or introspection request, authenticated with `secret` in the body. */
    function clientPost(path: '/oauth/revoke' | '/oauth/introspect', app: RegisteredApp, secret = app.clientSecret): Promise<Response> {
      return fetch(`${t.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: 'agora_oat_unknown', client_id: app.clientId, client_secret: secret }),
      });
    }

    it('charges revocation and introspection to the same budget, and once it is spent refuses them and the token endpoint', async () => {
      const app = await registerApp(t, user.id);
      // As at the token endpoint, a caller without the secret spends nothing of the client's budget.
      for (const path of ['/oauth/revoke', '/oauth/introspect'] as const) {
        const unauthenticated = await clientPost(path, app, 'wrong-secret');
        expect(unauthenticated.status).toBe(401);
        expect(((await unauthenticated.json()) as { error: string }).error).toBe('invalid_client');
        expect(unauthenticated.headers.get('x-ratelimit-remaining')).toBeNull();
      }

      const revoked = await clientPost('/oauth/revoke', app);
      expect(revoked.status).toBe(200);
      expect(budgetOf(revoked)).toMatchObject({ limit: 2, remaining: 1, used: 1 });
      const introspected = await clientPost('/oauth/introspect', app);
      expect(introspected.status).toBe(200);
      expect(await introspected.json()).toEqual({ active: false });
      expect(budgetOf(introspected)).toMatchObject({ limit: 2, remaining: 0, used: 2 });

      for (const path of ['/oauth/revoke', '/oauth/introspect'] as const) {
        const refused = await clientPost(path, app);
        expect(refused.status).toBe(429);
        expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(refused.headers.get('cache-control')).toBe('no-store');
        expect(budgetOf(refused)).toMatchObject({ limit: 2, remaining: 0, used: 2 });
        expect(await refused.json()).toEqual({
          error: 'too_many_requests',
          error_description: expect.stringMatching(/try again in \d+ seconds/),
        });
      }
      const token = await redeem(app);
      expect(token.status).toBe(429);
      expect(((await token.json()) as { error: string }).error).toBe('too_many_requests');
      // Still no one else's: a caller without the secret is answered as before.
      expect((await clientPost('/oauth/revoke', app, 'wrong-secret')).status).toBe(401);
      expect((await clientPost('/oauth/introspect', other)).status).toBe(200);
    });

    it('charges every credential of a user to one budget: a personal token and the access tokens of two applications', async () => {
      const tokenOf = async (app: RegisteredApp) => {
        const issued = await redeem(app, app.clientSecret, ['api']);
        expect(issued.status).toBe(200);
        return ((await issued.json()) as { access_token: string }).access_token;
      };
      const ofClient = await tokenOf(client);
      const ofOther = await tokenOf(other);
      const { token: personal } = await t.get(PersonalTokensService).create(user.id, { name: 'own', scopes: ['api'] });
      const credentials = [{ privateToken: personal }, { bearer: ofClient }, { bearer: ofOther }];

      const seen = [];
      for (const credential of credentials) {
        const res = await graphql(t.url, '{ rateLimit { budget limit remaining } }', credential);
        expect(res.status).toBe(200);
        seen.push(res.body.data!.rateLimit);
      }
      expect(seen).toEqual([
        { budget: 'USER', limit: 8, remaining: 7 },
        { budget: 'USER', limit: 8, remaining: 6 },
        { budget: 'USER', limit: 8, remaining: 5 },
      ]);
      const remaining = [];
      for (let i = 0; i < 5; i++) {
        const res = await get(t.url, '/api/user', credentials[i % credentials.length]!);
        expect(res.status).toBe(200);
        remaining.push(budgetOf(res).remaining);
      }
      expect(remaining).toEqual([4, 3, 2, 1, 0]);
      // Spent by all three together, it is spent for each of them: another application buys nothing.
      for (const credential of credentials) {
        const spent = await get(t.url, '/api/user', credential);
        expect(spent.status).toBe(429);
        expect(budgetOf(spent)).toMatchObject({ limit: 8, remaining: 0, used: 8 });
      }
      const third = await registerApp(t, user.id);
      expect((await graphql(t.url, '{ __typename }', { bearer: await tokenOf(third) })).status).toBe(429);
    });

    it('charges UserInfo 1 point of the access token’s API budget, with the headers, and answers 429 in the OAuth shape with CORS', async () => {
      const spaOrigin = 'https://spa-rate-limits.example.com';
      await registerPublicApp(t, user.id, { redirectUris: [`${spaOrigin}/callback`] });
      const issued = await redeem(client, client.clientSecret, ['openid', 'api']);
      expect(issued.status).toBe(200);
      const { access_token: token } = (await issued.json()) as { access_token: string };
      const userinfo = (method: 'GET' | 'POST', origin?: string) =>
        fetch(`${t.url}/oauth/userinfo`, { method, headers: { authorization: `Bearer ${token}`, ...(origin ? { origin } : {}) } });

      const first = await userinfo('GET');
      expect(first.status).toBe(200);
      expect(((await first.json()) as { sub: string }).sub).toBe(user.id);
      expect(budgetOf(first)).toMatchObject({ limit: 8, remaining: 7, used: 1 });
      expect(budgetOf(await userinfo('POST'))).toMatchObject({ remaining: 6, used: 2 });
      // One budget with the API: GraphQL and REST calls with the same token spend it too.
      expect(budgetOf(await graphql(t.url, '{ viewer { id } }', { bearer: token }))).toMatchObject({ remaining: 5 });
      expect(budgetOf(await get(t.url, '/api/user', { bearer: token }))).toMatchObject({ remaining: 4 });
      for (let i = 0; i < 4; i++) expect((await userinfo('GET')).status).toBe(200);

      for (const method of ['GET', 'POST'] as const) {
        const refused = await userinfo(method, spaOrigin);
        expect(refused.status).toBe(429);
        expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(refused.headers.get('cache-control')).toBe('no-store');
        expect(refused.headers.get('access-control-allow-origin')).toBe(spaOrigin);
        expect(budgetOf(refused)).toMatchObject({ limit: 8, remaining: 0, used: 8 });
        expect(await refused.json()).toEqual({
          error: 'too_many_requests',
          error_description: expect.stringMatching(/rate limit exceeded.*try again in \d+ seconds/),
        });
      }
      expect((await get(t.url, '/api/user', { bearer: token })).status).toBe(429);
    });

    it('charges a token UserInfo refuses 1 point of its address’s budget, as the REST API does', async () => {
      const bad = await fetch(`${t.url}/oauth/userinfo`, { headers: { authorization: 'Bearer agora_oat_not-a-token' } });
      expect(bad.status).toBe(401);
      expect(bad.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
      expect(budgetOf(bad)).toMatchObject({ limit: 5, remaining: 4, used: 1 });
      for (let i = 0; i < 4; i++) await get(t.url, '/api/events');
      const flooded = await fetch(`${t.url}/oauth/userinfo`, { headers: { authorization: 'Bearer agora_oat_still-not-a-token' } });
      expect(flooded.status).toBe(429);
      expect(flooded.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(((await flooded.json()) as { error: string }).error).toBe('too_many_requests');
    });
  });
});

describe('API rate limits behind a proxy (TRUST_PROXY=true)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true', RATE_LIMIT_ANONYMOUS_POINTS: '3', GRAPHQL_ANONYMOUS_MAX_COST: '300' });
  });
  afterAll(() => t.close());

  const via = (forwardedFor: string) => get(t.url, '/api/events', { headers: { 'x-forwarded-for': forwardedFor } });

  it('counts the address the proxy saw, whatever the client wrote before it', async () => {
    const seen = [];
    for (const forged of ['1.1.1.1', '2.2.2.2', 'not-an-address']) seen.push(budgetOf(await via(`${forged}, 203.0.113.9`)).remaining);
    expect(seen).toEqual([2, 1, 0]);
    expect((await via('4.4.4.4, 203.0.113.9')).status).toBe(429);
    expect(budgetOf(await via('203.0.113.10')).remaining).toBe(2);
  });

  it('counts an IPv6 client by its /64', async () => {
    expect(budgetOf(await via('2001:db8:5:6::1')).remaining).toBe(2);
    expect(budgetOf(await via('2001:db8:5:6:ffff::2')).remaining).toBe(1);
    expect(budgetOf(await via('2001:db8:5:7::1')).remaining).toBe(2);
  });
});

describe('the token endpoint budget of a public client, behind a proxy', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true', RATE_LIMIT_OAUTH_TOKEN_REQUESTS: '2' });
  });
  afterAll(() => t.close());

  it('is one per address: knowing the public client id spends only your own share', async () => {
    const app = await registerPublicApp(t, (await createUser(t)).id);
    const from = (address: string) =>
      fetch(`${t.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'agora_ort_unknown', client_id: app.clientId }),
      });
    expect((await from('198.51.100.1')).status).toBe(400);
    expect((await from('198.51.100.1')).status).toBe(400);
    const spent = await from('198.51.100.1');
    expect(spent.status).toBe(429);
    expect(((await spent.json()) as { error: string }).error).toBe('too_many_requests');
    // Every other installation of the same app still gets its answer.
    const elsewhere = await from('198.51.100.2');
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.headers.get('x-ratelimit-remaining')).toBe('1');
  });

  it('is shared with revocation and introspection, per address too', async () => {
    const app = await registerPublicApp(t, (await createUser(t)).id);
    const from = (address: string, path: string, body: Record<string, string>) =>
      fetch(`${t.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
        body: new URLSearchParams({ ...body, client_id: app.clientId }),
      });
    const revoked = await from('198.51.100.3', '/oauth/revoke', { token: 'agora_oat_unknown' });
    expect(revoked.status).toBe(200);
    expect(revoked.headers.get('x-ratelimit-remaining')).toBe('1');
    expect((await from('198.51.100.3', '/oauth/introspect', { token: 'agora_oat_unknown' })).status).toBe(200);
    const spent = await from('198.51.100.3', '/oauth/token', { grant_type: 'refresh_token', refresh_token: 'agora_ort_unknown' });
    expect(spent.status).toBe(429);
    expect((await from('198.51.100.3', '/oauth/introspect', { token: 'agora_oat_unknown' })).status).toBe(429);
    const elsewhere = await from('198.51.100.4', '/oauth/introspect', { token: 'agora_oat_unknown' });
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.headers.get('x-ratelimit-remaining')).toBe('1');
  });
});

describe('API rate limits turned off', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      RATE_LIMIT_ENABLED: 'false',
      RATE_LIMIT_ANONYMOUS_POINTS: '1',
      RATE_LIMIT_POINTS: '1',
      RATE_LIMIT_OAUTH_TOKEN_REQUESTS: '1',
    });
  });
  afterAll(() => t.close());

  it('sends no headers, never answers 429, and Query.rateLimit is null', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await graphql(t.url, '{ rateLimit { limit } }');
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ rateLimit: null });
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
    const listing = await rest(t.url, 'GET', '/api/events');
    expect(listing.status).toBe(200);
    expect(listing.headers.get('x-ratelimit-remaining')).toBeNull();
  });

  it('limits neither the token, revocation and introspection endpoints nor UserInfo', async () => {
    const user = await createUser(t);
    const app = await registerApp(t, user.id);
    const clientPost = async (path: string, body: Record<string, string>) => {
      const res = await fetch(`${t.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...body, client_id: app.clientId, client_secret: app.clientSecret }),
      });
      expect(res.headers.get('x-ratelimit-remaining')).toBeNull();
      return res;
    };
    let token = '';
    for (let i = 0; i < 2; i++) {
      const { code, verifier } = await issueCode(t, app, user.id, ['openid', 'api']);
      const issued = await clientPost('/oauth/token', {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: REDIRECT_URI,
      });
      expect(issued.status).toBe(200);
      token = ((await issued.json()) as { access_token: string }).access_token;
    }
    for (let i = 0; i < 3; i++) {
      expect((await clientPost('/oauth/introspect', { token })).status).toBe(200);
      const userinfo = await fetch(`${t.url}/oauth/userinfo`, { headers: { authorization: `Bearer ${token}` } });
      expect(userinfo.status).toBe(200);
      expect(userinfo.headers.get('x-ratelimit-limit')).toBeNull();
      const bad = await fetch(`${t.url}/oauth/userinfo`, { headers: { authorization: 'Bearer agora_oat_not-a-token' } });
      expect(bad.status).toBe(401);
      expect(bad.headers.get('x-ratelimit-limit')).toBeNull();
    }
    for (let i = 0; i < 2; i++) expect((await clientPost('/oauth/revoke', { token })).status).toBe(200);
  });
});
