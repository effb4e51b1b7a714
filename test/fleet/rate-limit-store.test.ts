import { request } from 'node:http';
import { get } from '../support/http.js';
import { parseMetrics, valueOf } from '../support/prometheus.js';
import { ServerProcess, startServer, waitForOutput } from '../support/processes.js';
import { RedisServer } from '../support/redis-server.js';
import { freePort } from '../support/test-app.js';
import { Fleet, FLEET_SECRET_KEY, scratchDatabase, ScratchDatabase, startFleet } from './fleet.js';

// What an operator reads and sets about the Redis that keeps the rate-limit counters: the store gauge of a
// process group (WORKERS > 1) and RATE_LIMIT_KEY_PREFIX, which keeps two deployments on one Redis apart.

const METRICS_TOKEN = 'store-metrics-token-Hq5Tz8Wn2Kc7Rb4Ym1Lv9';

let redis: RedisServer;
let db: ScratchDatabase;

beforeAll(async () => {
  redis = new RedisServer(await freePort());
  await redis.start();
  db = await scratchDatabase();
});

afterAll(async () => {
  await db?.drop();
  await redis?.close();
});

/** A scrape on a connection of its own (the primary hands out connections, not requests, in turn). */
function scrape(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/metrics`,
      { agent: false, headers: { connection: 'close', authorization: `Bearer ${METRICS_TOKEN}` } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`/metrics answered ${res.statusCode}: ${body}`))));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('WORKERS=2 with REDIS_URL', () => {
  let server: ServerProcess;

  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGTERM');
    await server?.exited;
  });

  it('reports agora_rate_limit_store_up as 1, not the number of workers, when both workers reach Redis', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    server = startServer({
      DATABASE_URL: db.url,
      SECRET_KEY: FLEET_SECRET_KEY,
      WORKERS: '2',
      HOST: '127.0.0.1',
      PORT: String(port),
      BASE_URL: url,
      METRICS_TOKEN,
      REDIS_URL: redis.url,
      DATABASE_POOL_SIZE: '4',
      LOG_LEVEL: 'info',
    });
    await waitForOutput(server, /"msg":"Started 2 workers/, 120_000);
    // Each worker connects on its first rate-limited request or earlier; one request per connection
    // reaches both workers in turn.
    for (let i = 0; i < 4; i++) expect((await get(url, '/api/events')).status).toBe(200);
    for (let i = 0; i < 2; i++) expect(valueOf(parseMetrics(await scrape(url)), 'agora_rate_limit_store_up')).toBe(1);
  });
});

describe('two deployments on one Redis', () => {
  let staging: Fleet;
  let production: Fleet;

  afterAll(async () => {
    await staging?.stop();
    await production?.stop();
  });

  it('keeps separate budgets when their RATE_LIMIT_KEY_PREFIX differ', async () => {
    const limits = { REDIS_URL: redis.url, RATE_LIMIT_ANONYMOUS_POINTS: '6', GRAPHQL_ANONYMOUS_MAX_COST: '600' };
    staging = await startFleet(db.url, 1, { ...limits, RATE_LIMIT_KEY_PREFIX: 'agora-staging:' });
    production = await startFleet(db.url, 1, { ...limits, RATE_LIMIT_KEY_PREFIX: 'agora-production:' });
    const remaining = async (fleet: Fleet) => {
      const res = await get(fleet.instances[0]!.url, '/api/events');
      return { status: res.status, remaining: res.headers.get('x-ratelimit-remaining') };
    };
    for (let left = 5; left >= 0; left--) expect(await remaining(staging)).toEqual({ status: 200, remaining: String(left) });
    expect((await remaining(staging)).status).toBe(429);
    // The same caller's budget in the other deployment is whole.
    expect(await remaining(production)).toEqual({ status: 200, remaining: '5' });
  });

  it('refuses a prefix with characters outside the allowed set, naming the setting', async () => {
    const port = await freePort();
    const server = startServer({
      DATABASE_URL: db.url,
      SECRET_KEY: FLEET_SECRET_KEY,
      PORT: String(port),
      RATE_LIMIT_KEY_PREFIX: 'agora staging*',
    });
    const timeout = new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 30_000).unref());
    try {
      expect(await Promise.race([server.exited, timeout])).toBe(1);
      expect(server.output()).toMatch(/RATE_LIMIT_KEY_PREFIX.*must be 1 to 64 letters, digits/);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGTERM');
    }
  });
});
