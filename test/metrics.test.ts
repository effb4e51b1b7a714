import { randomBytes } from 'node:crypto';
import { Browser, signIn } from './support/browser.js';
import { createUser, createUserWithToken } from './support/fixtures.js';
import { get, graphql } from './support/http.js';
import { issueCode, REDIRECT_URI, registerApp, RegisteredApp, unknownCodeError } from './support/oauth.js';
import { parseMetrics, Sample, seriesOf, valueOf } from './support/prometheus.js';
import { freePort, startTestApp, TestApp } from './support/test-app.js';

const METRICS_TOKEN = 'metrics-token-7Hq2xV9pLm4Rk8Zt3Wc6Yb1Nf5Jd0Ga';

describe('/metrics with METRICS_TOKEN', () => {
  let t: TestApp;
  let client: RegisteredApp;

  beforeAll(async () => {
    t = await startTestApp({ METRICS_TOKEN });
    client = await registerApp(t, (await createUser(t)).id);
  });
  afterAll(() => t.close());

  async function scrape(): Promise<Sample[]> {
    const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(await res.text());
  }

  /** How much each sample moved while `act` ran. */
  async function during(act: () => Promise<unknown>): Promise<(name: string, labels?: Record<string, string>) => number> {
    const before = await scrape();
    await act();
    const after = await scrape();
    return (name, labels) => valueOf(after, name, labels) - valueOf(before, name, labels);
  }

  it('refuses a scrape without the token, or with another one, and does not count it as an API refusal', async () => {
    const moved = await during(async () => {
      const none = await fetch(`${t.url}/metrics`);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(await none.json()).toEqual({ message: '401 Unauthorized' });
      const wrong = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN.slice(0, -1)}x` } });
      expect(wrong.status).toBe(401);
      expect(await wrong.text()).not.toContain('agora_');
    });
    expect(moved('agora_http_requests_total', { method: 'GET', route: '/metrics', status: '401' })).toBe(2);
    expect(moved('agora_api_auth_refusals_total', { reason: 'invalid_token' })).toBe(0);
  });

  it('counts HTTP requests by route pattern and status, with a latency histogram', async () => {
    const id = randomBytes(8).toString('hex');
    const moved = await during(async () => {
      await get(t.url, '/healthz');
      await get(t.url, '/healthz');
      await get(t.url, `/api/events/${id}`);
    });
    expect(moved('agora_http_requests_total', { method: 'GET', route: '/healthz', status: '200' })).toBe(2);
    expect(moved('agora_http_request_duration_seconds_count', { method: 'GET', route: '/healthz' })).toBe(2);
    expect(moved('agora_http_request_duration_seconds_bucket', { method: 'GET', route: '/healthz', le: '+Inf' })).toBe(2);
    const events = (await scrape()).filter((s) => s.name === 'agora_http_requests_total' && s.labels.route === '/api/events/:id');
    expect(events.length).toBeGreaterThan(0);
    expect(JSON.stringify(await scrape())).not.toContain(id);
  });

  it('puts every path no route matches under one label value', async () => {
    await get(t.url, `/no-such-${randomBytes(8).toString('hex')}`);
    const before = await scrape();
    const paths = [
      `/no-such-${randomBytes(8).toString('hex')}`,
      `/x/${randomBytes(8).toString('hex')}/y`,
      `/api/${randomBytes(8).toString('hex')}`,
    ];
    for (const path of paths) expect((await get(t.url, path)).status).toBe(404);
    const after = await scrape();
    const routes = (samples: Sample[]) =>
      new Set(seriesOf(samples, 'agora_http_requests_total').map((l) => `${l.method} ${l.route} ${l.status}`));
    expect([...routes(after)].filter((r) => !routes(before).has(r) && !r.includes('/metrics'))).toEqual([]);
    expect(valueOf(after, 'agora_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(
      valueOf(before, 'agora_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }) + 3,
    );
    const text = JSON.stringify(after);
    for (const path of paths) expect(text).not.toContain(path);
  });

  it('counts GraphQL operations by name, anonymous and failed ones under fixed names', async () => {
    const { token } = await createUserWithToken(t, ['api']);
    const moved = await during(async () => {
      expect((await graphql(t.url, 'query MetricsProbe { viewer { username } }', { bearer: token })).status).toBe(200);
      expect((await graphql(t.url, '{ __typename }')).status).toBe(200);
      expect((await graphql(t.url, 'query Broken { nope }', { bearer: token })).body.errors).toHaveLength(1);
      expect((await graphql(t.url, 'query Garbled {', { bearer: token })).body.errors).toHaveLength(1);
    });
    expect(moved('agora_graphql_operations_total', { operation: 'MetricsProbe', type: 'query', outcome: 'ok' })).toBe(1);
    expect(moved('agora_graphql_operation_duration_seconds_count', { operation: 'MetricsProbe', type: 'query' })).toBe(1);
    expect(moved('agora_graphql_operations_total', { operation: 'anonymous', type: 'query', outcome: 'ok' })).toBe(1);
    // Neither document resolves to an operation: their client-chosen names are not labels.
    expect(moved('agora_graphql_operations_total', { operation: 'unknown', type: 'unknown', outcome: 'error' })).toBe(2);
    expect(seriesOf(await scrape(), 'agora_graphql_operations_total').some((l) => l.operation === 'Broken')).toBe(false);
  });

  it('counts API requests refused for their credentials, by reason', async () => {
    const { token: readOnly } = await createUserWithToken(t, ['read_api']);
    const moved = await during(async () => {
      expect((await graphql(t.url, '{ viewer { username } }', { bearer: 'agora_pat_not-a-real-token' })).status).toBe(401);
      expect((await graphql(t.url, '{ viewer { username } }')).status).toBe(401);
      expect((await get(t.url, '/api/user')).status).toBe(401);
      const write = await fetch(`${t.url}/api/organizers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'private-token': readOnly },
        body: JSON.stringify({ name: 'Metrics', slug: 'metrics-probe' }),
      });
      expect(write.status).toBe(403);
    });
    expect(moved('agora_api_auth_refusals_total', { reason: 'invalid_token' })).toBe(1);
    expect(moved('agora_api_auth_refusals_total', { reason: 'missing_credentials' })).toBe(2);
    expect(moved('agora_api_auth_refusals_total', { reason: 'insufficient_scope' })).toBe(1);
  });

  it('counts tokens issued by grant and refused by OAuth error', async () => {
    const user = await createUser(t);
    const { code, verifier } = await issueCode(t, client, user.id);
    const moved = await during(async () => {
      const res = await fetch(`${t.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          code_verifier: verifier,
          redirect_uri: REDIRECT_URI,
          client_id: client.clientId,
          client_secret: client.clientSecret,
        }),
      });
      expect(res.status).toBe(200);
      expect(await unknownCodeError(t.url, client.clientId, client.clientSecret)).toBe('invalid_grant');
      expect(await unknownCodeError(t.url, client.clientId, 'wrong-secret')).toBe('invalid_client');
    });
    expect(moved('agora_oauth_tokens_issued_total', { grant: 'authorization_code' })).toBe(1);
    expect(moved('agora_oauth_token_refusals_total', { reason: 'invalid_grant' })).toBe(1);
    expect(moved('agora_oauth_token_refusals_total', { reason: 'invalid_client' })).toBe(1);
  });

  it('counts sign-in failures', async () => {
    const user = await createUser(t);
    const moved = await during(async () => {
      expect((await signIn(new Browser(t.url), user.username, 'not-the-password')).status).toBe(401);
    });
    expect(moved('agora_sign_in_failures_total', { form: 'sign_in' })).toBe(1);
  });

  it('reports the database pool, the event loop and the process', async () => {
    const samples = await scrape();
    expect(valueOf(samples, 'agora_db_pool_max_connections')).toBeGreaterThanOrEqual(1);
    expect(valueOf(samples, 'agora_db_pool_connections')).toBeGreaterThanOrEqual(1);
    expect(samples.some((s) => s.name === 'agora_db_pool_idle_connections')).toBe(true);
    // Requests queued for a connection at the moment of the scrape: the job workers share the pool, so
    // under load a few may wait (CI saw 2); the gauge is a whole number, never negative.
    expect(samples.some((s) => s.name === 'agora_db_pool_waiting_requests')).toBe(true);
    const waiting = valueOf(samples, 'agora_db_pool_waiting_requests');
    expect(Number.isInteger(waiting)).toBe(true);
    expect(waiting).toBeGreaterThanOrEqual(0);
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_p99_seconds')).toBe(true);
    expect(samples.some((s) => s.name === 'process_resident_memory_bytes')).toBe(true);
  });
});

describe('/metrics by default', () => {
  it('is not served: no route on the main listener', async () => {
    const t = await startTestApp();
    try {
      const res = await fetch(`${t.url}/metrics`);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain('agora_');
    } finally {
      await t.close();
    }
  });
});

describe('/metrics with METRICS_PORT', () => {
  it('is served on its own listener only, and not on the main one', async () => {
    const port = await freePort();
    const t = await startTestApp({ METRICS_PORT: String(port), METRICS_HOST: '127.0.0.1' });
    try {
      expect((await fetch(`${t.url}/metrics`)).status).toBe(404);
      await get(t.url, '/healthz');
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      const samples = parseMetrics(await res.text());
      expect(valueOf(samples, 'agora_http_requests_total', { method: 'GET', route: '/healthz', status: '200' })).toBe(1);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST' })).status).toBe(405);
    } finally {
      await t.close();
    }
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });

  it('also requires METRICS_TOKEN there when it is set', async () => {
    const port = await freePort();
    const t = await startTestApp({ METRICS_PORT: String(port), METRICS_HOST: '127.0.0.1', METRICS_TOKEN });
    try {
      expect((await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
