import { Redis } from 'ioredis';
import { ApiResponse, get, graphql } from '../support/http.js';
import { parseMetrics, valueOf } from '../support/prometheus.js';
import { RedisServer } from '../support/redis-server.js';
import { freePort } from '../support/test-app.js';
import { cli, createFleetUser, Fleet, Instance, scratchDatabase, ScratchDatabase, startFleet } from './fleet.js';

// Rate limits shared through Redis by three instances (REDIS_URL), as in production: a flood spread over
// the instances by a load balancer is counted once. The tier starts a Redis server of its own
// (test/support/redis-server.ts), so it can also stop it.

const METRICS_TOKEN = 'fleet-metrics-token-Xr4Vb8Nq2Lm6Kt0Pz3Wc';
const WINDOW_SECONDS = 4;

let redis: RedisServer;
let db: ScratchDatabase;
let fleet: Fleet;
let instances: Instance[];

const remaining = (res: Pick<ApiResponse, 'headers'>) => Number(res.headers.get('x-ratelimit-remaining'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function storeUp(instance: Instance): Promise<number> {
  const res = await fetch(`${instance.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  return valueOf(parseMetrics(await res.text()), 'agora_rate_limit_store_up');
}

/** Calls of each command Redis has run since it started. */
async function commandCalls(): Promise<Record<string, number>> {
  const client = new Redis(redis.url, { lazyConnect: true });
  await client.connect();
  try {
    const info = await client.info('commandstats');
    return Object.fromEntries([...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map(([, name, calls]) => [name!, Number(calls)]));
  } finally {
    client.disconnect();
  }
}

beforeAll(async () => {
  redis = new RedisServer(await freePort());
  await redis.start();
  db = await scratchDatabase();
  fleet = await startFleet(db.url, 3, {
    REDIS_URL: redis.url,
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
    RATE_LIMIT_ANONYMOUS_POINTS: '6',
    RATE_LIMIT_POINTS: '9',
    GRAPHQL_MAX_COST: '900',
    GRAPHQL_ANONYMOUS_MAX_COST: '600',
    METRICS_TOKEN,
  });
  instances = fleet.instances;
});

afterAll(async () => {
  await fleet?.stop();
  await db?.drop();
  await redis?.close();
});

/** Waits for a fresh window. */
beforeEach(() => sleep(WINDOW_SECONDS * 1000 + 100));

it('counts a flood spread over the instances once, refuses it on every instance with the headers, and resets', async () => {
  const seen: number[] = [];
  for (let i = 0; i < 6; i++) {
    const res = await get(instances[i % 3]!.url, '/api/events');
    expect(res.status).toBe(200);
    seen.push(remaining(res));
  }
  expect(seen).toEqual([5, 4, 3, 2, 1, 0]);
  for (const instance of instances) {
    const refused = await graphql(instance.url, '{ __typename }');
    expect(refused.status).toBe(429);
    expect(refused.body.errors![0]!.extensions!.code).toBe('RATE_LIMITED');
    expect(refused.headers.get('x-ratelimit-limit')).toBe('6');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  }
  await sleep(WINDOW_SECONDS * 1000 + 100);
  for (const instance of instances) expect((await get(instance.url, '/api/events')).status).toBe(200);
});

it('shares a token budget across instances, apart from the anonymous one, at one Redis round trip per request, a refused charge uncounted', async () => {
  const username = `fleetrl${process.pid}`;
  await createFleetUser(fleet.env, username, 'RL');
  const { token } = (await cli(fleet.env, 'tokens:create', '--user', username, '--name', 'rl')) as { token: string };

  const before = await commandCalls();
  const seen: number[] = [];
  const viewer = async (i: number) => {
    const res = await graphql(instances[i % 3]!.url, '{ viewer { username } }', { privateToken: token });
    expect(res.status).toBe(200);
    seen.push(remaining(res));
  };
  for (let i = 0; i < 7; i++) await viewer(i);
  // 3 points (1 + 100 × 2 cost points) with 2 left: refused, and not counted, by one atomic script.
  const costly = await graphql(instances[1]!.url, '{ events(first: 100) { nodes { id } } }', { privateToken: token });
  expect(costly.status).toBe(429);
  expect(remaining(costly)).toBe(2);
  for (let i = 7; i < 9; i++) await viewer(i);
  const after = await commandCalls();
  expect(seen).toEqual([8, 7, 6, 5, 4, 3, 2, 1, 0]);
  // One round trip per request: one script (EVAL the first time a connection runs it, EVALSHA after),
  // whose own commands Redis counts too (SET NX EX, GET, PTTL, INCRBY when the charge fits); nothing else
  // but this test's INFO.
  const delta = Object.fromEntries(
    Object.entries(after)
      .map(([name, calls]) => [name, calls - (before[name] ?? 0)] as const)
      .filter(([name, calls]) => calls > 0 && name !== 'info' && !name.startsWith('client')),
  );
  expect((delta.evalsha ?? 0) + (delta.eval ?? 0)).toBe(10);
  expect(Object.keys(delta).filter((name) => !['eval', 'evalsha', 'set', 'get', 'incrby', 'pttl', 'expire'].includes(name))).toEqual([]);
  expect(delta.incrby).toBe(9);

  for (const instance of instances) {
    expect((await graphql(instance.url, '{ viewer { username } }', { privateToken: token })).status).toBe(429);
  }
  const anonymous = await get(instances[1]!.url, '/api/events');
  expect(anonymous.status).toBe(200);
  expect(remaining(anonymous)).toBe(5);
});

it('keeps answering while Redis is down, counting per instance, and shares the counters again when it is back', async () => {
  for (const instance of instances) expect(await storeUp(instance)).toBe(1);
  await redis.kill();

  // Each instance now counts on its own: 6 anonymous requests on each are answered.
  for (const instance of instances) {
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await get(instance.url, '/api/events');
      expect(res.status).toBe(200);
      seen.push(remaining(res));
    }
    expect(seen).toEqual([5, 4, 3, 2, 1, 0]);
    expect((await get(instance.url, '/api/events')).status).toBe(429);
    expect(await storeUp(instance)).toBe(0);
  }
  for (const instance of instances) {
    expect(instance.logs().some((line) => String(line.msg).includes('Redis (REDIS_URL) cannot be reached'))).toBe(true);
  }

  await redis.start();
  const deadline = Date.now() + 30_000;
  while ((await Promise.all(instances.map(storeUp))).some((up) => up !== 1)) {
    if (Date.now() > deadline) throw new Error('the instances did not reconnect to Redis within 30 s');
    await sleep(200);
  }
  await sleep(WINDOW_SECONDS * 1000 + 100);
  const shared = [];
  for (let i = 0; i < 3; i++) shared.push(remaining(await get(instances[i]!.url, '/api/events')));
  expect(shared).toEqual([5, 4, 3]);
  for (const instance of instances) {
    expect(instance.logs().some((line) => String(line.msg).includes('Redis answers again'))).toBe(true);
  }
});

it('counts in memory at once while Redis is too slow to answer, and goes back to Redis after', async () => {
  const client = new Redis(redis.url, { lazyConnect: true });
  await client.connect();
  try {
    const stall = client.call('DEBUG', 'SLEEP', '2'); // Redis answers nothing for 2 s
    await sleep(50);
    const [a] = instances as [Instance];
    const started = Date.now();
    const res = await get(a.url, '/api/events');
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1500); // the 500 ms command timeout, not the stall
    expect(remaining(res)).toBe(5);
    // Marked unusable for a while: the next requests do not wait on Redis at all.
    const next = Date.now();
    expect((await get(a.url, '/api/events')).status).toBe(200);
    expect(Date.now() - next).toBeLessThan(400);
    expect(await storeUp(a)).toBe(0);
    await stall;
  } finally {
    client.disconnect();
  }
  const deadline = Date.now() + 15_000;
  while ((await storeUp(instances[0]!)) !== 1) {
    if (Date.now() > deadline) throw new Error('instance A did not go back to Redis within 15 s');
    await sleep(200);
  }
});
