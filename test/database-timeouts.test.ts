import pg from 'pg';
import { DataSource } from 'typeorm';
import { OwnedPool } from '../src/database/owned-pool.js';
import { createTestDatabase, serverUrl, TestDatabase } from './support/database.js';
import { get, graphql, rest } from './support/http.js';
import { parseMetrics, valueOf } from './support/prometheus.js';
import { eventually, runCli } from './support/processes.js';
import { startStartupGuard, StartupGuard } from './support/startup-guard.js';
import { proxyDatabase, TcpProxy } from './support/tcp-proxy.js';
import { startTestApp, TestApp } from './support/test-app.js';

// Holding a lock from another session, and losing a link, need a PostgreSQL server: PGlite is one
// session in this process. The embedded database has its own few tests below.
const onServer = serverUrl() ? describe : describe.skip;
const onEmbedded = serverUrl() ? describe.skip : describe;

const METRICS_TOKEN = 'metrics-token-Qw7Ln3Xp9Rt5Vb2Kd8Hs4Fz6Jm1Yc0Ga';

/** A request with a stopwatch, given up after `limitMs` (status 0) so that a hang fails the test, not the run. */
async function timed(
  url: string,
  init: RequestInit = {},
  limitMs = 15_000,
): Promise<{ status: number; ms: number; res?: Response; text: string }> {
  const started = performance.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(limitMs) });
    const text = await res.text();
    return { status: res.status, ms: performance.now() - started, res, text };
  } catch {
    return { status: 0, ms: performance.now() - started, text: '' };
  }
}

/** A session of its own on the test database, holding a table locked until released. */
async function lockTable(databaseUrl: string, table = 'events'): Promise<{ waiting(): Promise<number>; release(): Promise<void> }> {
  const locker = new pg.Client({ connectionString: databaseUrl });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  return {
    waiting: async () => {
      // The locker is in a transaction, where the activity statistics are a snapshot taken once.
      await locker.query('SELECT pg_stat_clear_snapshot()');
      return Number(
        (
          await locker.query<{ n: string }>(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          )
        ).rows[0]!.n,
      );
    },
    release: async () => {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    },
  };
}

onServer('timeouts on every wait for the database', () => {
  describe('a statement that runs past DATABASE_STATEMENT_TIMEOUT_SECONDS', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ DATABASE_STATEMENT_TIMEOUT_SECONDS: '1' });
    });
    afterAll(async () => t?.close());

    it('is cancelled by the server and answered 503 with Retry-After in each transport, not left waiting on a lock', async () => {
      const lock = await lockTable(t.databaseEnv.DATABASE_URL!);
      try {
        const api = await timed(`${t.url}/api/events`);
        expect(api.status).toBe(503);
        expect(api.res!.headers.get('retry-after')).toBe('5');
        expect(JSON.parse(api.text)).toEqual({ message: '503 Service Unavailable' });
        expect(api.ms).toBeLessThan(3_000);

        const started = performance.now();
        const gql = await graphql(t.url, '{ events(first: 1) { nodes { id } } }');
        expect(performance.now() - started).toBeLessThan(3_000);
        expect(gql.status).toBe(503);
        expect(gql.headers.get('retry-after')).toBe('5');
        expect(gql.body.errors?.map((e) => e.extensions?.code)).toEqual(['SERVICE_UNAVAILABLE']);
        expect(gql.text).not.toMatch(/statement timeout|canceling/i);
      } finally {
        await lock.release();
      }
      // The connection survived the cancellation: the next request is served.
      expect((await rest(t.url, 'GET', '/api/events')).status).toBe(200);
      expect(t.logs.filter((l) => l.level === 50)).toEqual([]);
    });
  });

  describe('a statement that waits for a pooled connection past DATABASE_POOL_WAIT_TIMEOUT_MS', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ DATABASE_POOL_SIZE: '1', DATABASE_POOL_WAIT_TIMEOUT_MS: '300', METRICS_TOKEN });
    });
    afterAll(async () => t?.close());

    it('is shed with 503 and Retry-After at once instead of queueing, logged once for many, counted in /metrics', async () => {
      const lock = await lockTable(t.databaseEnv.DATABASE_URL!);
      let holder: Promise<{ status: number }> | undefined;
      try {
        // The pool's one connection waits on the lock, inside a request.
        holder = timed(`${t.url}/api/events`);
        expect(await eventually(async () => (await lock.waiting()) === 1, 5_000)).toBe(true);

        const shed = await timed(`${t.url}/api/events`);
        expect(shed.status).toBe(503);
        expect(shed.res!.headers.get('retry-after')).toBe('5');
        expect(JSON.parse(shed.text)).toEqual({ message: '503 Service Unavailable' });
        expect(shed.ms).toBeLessThan(1_500);

        const started = performance.now();
        // Five different pages: the same anonymous page asked at once is read once for all (PublicListingCache).
        const shedGraphql = await Promise.all(
          Array.from({ length: 5 }, (_, i) => graphql(t.url, `{ events(first: ${i + 1}) { nodes { id } } }`)),
        );
        expect(performance.now() - started).toBeLessThan(1_500);
        for (const res of shedGraphql) {
          expect(res.status).toBe(503);
          expect(res.body.errors?.map((e) => e.extensions?.code)).toEqual(['SERVICE_UNAVAILABLE']);
        }
        expect((await timed(`${t.url}/readyz`)).status).toBe(503);
      } finally {
        await lock.release();
      }
      expect((await holder)?.status).toBe(200);
      expect((await rest(t.url, 'GET', '/api/events')).status).toBe(200);

      const waitLines = t.logs.filter((l) => /waited \d+ ms for a database connection/.test(String(l.msg)));
      expect(waitLines).toHaveLength(1);
      expect(waitLines[0]).toMatchObject({ level: 40 });
      expect(t.logs.filter((l) => l.level === 50)).toEqual([]);

      const scrape = await get(t.url, '/metrics', { bearer: METRICS_TOKEN });
      const samples = parseMetrics(scrape.text);
      expect(valueOf(samples, 'agora_db_pool_shed_total')).toBeGreaterThanOrEqual(7);
      expect(valueOf(samples, 'agora_db_pool_wait_seconds_count')).toBeGreaterThan(valueOf(samples, 'agora_db_pool_shed_total'));
      // Nothing is left waiting once the lock is gone. Read until it is so: the scrape's own gauges (the
      // webhook backlog) and the sweeper's tick may be queued for the one connection at the moment of a scrape.
      const waiting = async () =>
        valueOf(parseMetrics((await get(t.url, '/metrics', { bearer: METRICS_TOKEN })).text), 'agora_db_pool_waiting_requests');
      expect(await eventually(async () => (await waiting()) === 0, 5_000)).toBe(true);
    });
  });

  describe('a link to the database that stops answering without closing', () => {
    let db: TestDatabase;
    let proxy: TcpProxy;
    let t: TestApp;
    beforeAll(async () => {
      db = await createTestDatabase();
      let viaProxy: string;
      ({ proxy, url: viaProxy } = await proxyDatabase(db.env.DATABASE_URL!));
      t = await startTestApp(
        { DATABASE_POOL_SIZE: '1', DATABASE_STATEMENT_TIMEOUT_SECONDS: '1', DATABASE_CONNECT_TIMEOUT_SECONDS: '1' },
        { databaseEnv: { DATABASE_URL: viaProxy } },
      );
    });
    afterAll(async () => {
      await proxy?.close();
      await t?.close();
      await db?.drop();
    });

    it('gives up on the statement after the statement timeout and a grace, and serves the next request on a new connection', async () => {
      expect((await rest(t.url, 'GET', '/api/events')).status).toBe(200);
      // The pooled connection goes silent for good; new connections get through.
      proxy.blackhole();
      proxy.heal();
      const silent = await timed(`${t.url}/api/events`);
      expect(silent.status).toBe(503);
      expect(silent.res!.headers.get('retry-after')).toBe('5');
      expect(silent.ms).toBeGreaterThanOrEqual(1_900);
      expect(silent.ms).toBeLessThan(4_000);
      // That connection was discarded, not handed to the next request.
      const next = await timed(`${t.url}/api/events`);
      expect(next.status).toBe(200);
      expect((await get(t.url, '/healthz')).status).toBe(200);
    });
  });

  describe('liveness', () => {
    let db: TestDatabase;
    let proxy: TcpProxy;
    let t: TestApp;
    beforeEach(async () => {
      db = await createTestDatabase();
      let viaProxy: string;
      ({ proxy, url: viaProxy } = await proxyDatabase(db.env.DATABASE_URL!));
      // Statement timeouts off: nothing frees a connection the link stopped answering.
      t = await startTestApp(
        {
          DATABASE_POOL_SIZE: '1',
          DATABASE_STATEMENT_TIMEOUT_SECONDS: '0',
          DATABASE_STALL_SECONDS: '1',
          DATABASE_CONNECT_TIMEOUT_SECONDS: '1',
        },
        { databaseEnv: { DATABASE_URL: viaProxy } },
      );
      expect((await rest(t.url, 'GET', '/api/events')).status).toBe(200);
    });
    afterEach(async () => {
      await proxy?.close();
      await t?.close();
      await db?.drop();
    });

    it('fails (503) once the pool has made no progress for DATABASE_STALL_SECONDS while a new connection to the database answers', async () => {
      proxy.blackhole();
      proxy.heal();
      const stuck = timed(`${t.url}/api/events`, {}, 30_000);
      const wedged = await eventually(async () => (await get(t.url, '/healthz')).status === 503, 15_000);
      expect(wedged).toBe(true);
      const res = await get(t.url, '/healthz');
      expect(res.body).toEqual({ status: 'wedged', stalledSeconds: expect.any(Number) });
      expect(t.logs.filter((l) => String(l.msg).startsWith('Database pool wedged'))).toHaveLength(1);
      expect((await timed(`${t.url}/readyz`)).status).toBe(503);
      await proxy.close(); // ends the stuck request
      await stuck;
    });

    it('stays 200 while the database cannot be reached at all, however long', async () => {
      proxy.blackhole();
      const stuck = timed(`${t.url}/api/events`, {}, 30_000);
      // Past the stall bound and a whole check (the pool's probe and a new connection, each bounded).
      const until = Date.now() + 8_000;
      const statuses = new Set<number>();
      while (Date.now() < until) {
        statuses.add((await get(t.url, '/healthz')).status);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect([...statuses]).toEqual([200]);
      expect(t.logs.filter((l) => String(l.msg).startsWith('Database pool wedged'))).toEqual([]);
      await proxy.close();
      await stuck;
    });
  });

  describe('a database locked for longer than DATABASE_STALL_SECONDS', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({
        DATABASE_POOL_SIZE: '1',
        DATABASE_STATEMENT_TIMEOUT_SECONDS: '1',
        DATABASE_POOL_WAIT_TIMEOUT_MS: '300',
        DATABASE_STALL_SECONDS: '3',
      });
    });
    afterAll(async () => t?.close());

    it('keeps liveness 200 while every statement is cancelled by the server (an answer is progress) and the pool is saturated', async () => {
      const lock = await lockTable(t.databaseEnv.DATABASE_URL!);
      const answers: number[] = [];
      const healthz = new Set<number>();
      try {
        // Three clients keep the one connection busy: each statement waits on the lock until the
        // server cancels it (57014) after 1 s, and the others are shed after 300 ms.
        const until = Date.now() + 9_000; // the stall bound, then three of liveness's checks
        const client = async () => {
          while (Date.now() < until) answers.push((await timed(`${t.url}/api/events`)).status);
        };
        const probe = async () => {
          while (Date.now() < until) {
            healthz.add((await timed(`${t.url}/healthz`)).status);
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
        };
        await Promise.all([client(), client(), client(), probe()]);
      } finally {
        await lock.release();
      }
      expect(new Set(answers)).toEqual(new Set([503]));
      expect([...healthz]).toEqual([200]);
      expect(t.logs.filter((l) => String(l.msg).startsWith('Database pool wedged'))).toEqual([]);
      expect((await rest(t.url, 'GET', '/api/events')).status).toBe(200);
    });
  });

  describe('the bounds on the serving pool, and none on the CLI', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ DATABASE_STATEMENT_TIMEOUT_SECONDS: '1', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS: '30' });
    });
    afterAll(async () => t?.close());

    it('sets statement_timeout and idle_in_transaction_session_timeout on the connections that serve requests', async () => {
      const dataSource = t.get(DataSource);
      expect(await dataSource.query('SHOW statement_timeout')).toEqual([{ statement_timeout: '1s' }]);
      expect(await dataSource.query('SHOW idle_in_transaction_session_timeout')).toEqual([{ idle_in_transaction_session_timeout: '30s' }]);
    });

    it('lets a CLI command wait on a lock past DATABASE_STATEMENT_TIMEOUT_SECONDS and finish', async () => {
      const lock = await lockTable(t.databaseEnv.DATABASE_URL!, 'users');
      let cli: ReturnType<typeof runCli> | undefined;
      let exitedWhileLocked = false;
      try {
        cli = runCli(
          { ...t.databaseEnv, DATABASE_STATEMENT_TIMEOUT_SECONDS: '1' },
          'users:create',
          '--username',
          'locked-out',
          '--email',
          'locked-out@example.com',
          '--name',
          'Locked Out',
          '--password',
          'waits-for-the-lock-1',
        );
        void cli.then(() => (exitedWhileLocked = true));
        expect(await eventually(async () => (await lock.waiting()) >= 1, 20_000)).toBe(true);
        // Past the statement timeout the server would have cancelled a bounded statement.
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        expect(exitedWhileLocked).toBe(false);
      } finally {
        await lock.release();
      }
      const result = await cli!;
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.json.username).toBe('locked-out');
    });
  });

  describe('behind PgBouncer in session mode (start-up parameters it does not track are refused)', () => {
    let db: TestDatabase;
    let guard: StartupGuard;
    let t: TestApp;
    beforeAll(async () => {
      db = await createTestDatabase();
      guard = await startStartupGuard(db.env.DATABASE_URL!);
      t = await startTestApp(
        { DATABASE_STATEMENT_TIMEOUT_SECONDS: '1', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS: '30' },
        { databaseEnv: { DATABASE_URL: guard.url } },
      );
    });
    afterAll(async () => {
      await t?.close();
      await guard?.close();
      await db?.drop();
    });

    it('serves requests, with the statement bounds set on each connection after it opens', async () => {
      expect((await rest(t.url, 'GET', '/api/events')).status).toBe(200);
      expect((await graphql(t.url, '{ events(first: 1) { nodes { id } } }')).status).toBe(200);
      expect(guard.refused).toEqual([]);
      expect(guard.parameters).toContain('application_name');
      const dataSource = t.get(DataSource);
      expect(await dataSource.query('SHOW statement_timeout')).toEqual([{ statement_timeout: '1s' }]);
      expect(await dataSource.query('SHOW idle_in_transaction_session_timeout')).toEqual([{ idle_in_transaction_session_timeout: '30s' }]);
    });
  });
});

onEmbedded('waits for the embedded database', () => {
  describe('moderate concurrency', () => {
    let t: TestApp;
    beforeAll(async () => {
      // The shortest pool wait allowed: on a PostgreSQL server it would shed most of these.
      t = await startTestApp({ DATABASE_POOL_WAIT_TIMEOUT_MS: '50' });
    });
    afterAll(async () => t?.close());

    it('is queued for the one connection, not shed with 503', async () => {
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          i % 2 ? rest(t.url, 'GET', '/api/events') : graphql(t.url, '{ events(first: 20) { nodes { id title } } }'),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      expect(t.logs.filter((l) => /waited \d+ ms for a database connection/.test(String(l.msg)))).toEqual([]);
    });
  });

  describe('liveness', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ DATABASE_STATEMENT_TIMEOUT_SECONDS: '0', DATABASE_STALL_SECONDS: '1' });
    });
    afterAll(async () => t?.close());

    it('fails (503) when the pool answers nothing, judged without a second connection to the in-process database, and recovers', async () => {
      // A connection a bug never gave back, inside a transaction: PGlite serves one session, so a
      // second connection to its socket would wait behind that transaction too.
      const leaked = await t.get(OwnedPool).pool.connect();
      await leaked.query('BEGIN');
      try {
        const wedged = await eventually(async () => (await get(t.url, '/healthz')).status === 503, 15_000);
        expect(wedged).toBe(true);
        expect((await get(t.url, '/healthz')).body).toEqual({ status: 'wedged', stalledSeconds: expect.any(Number) });
        const lines = t.logs.filter((l) => String(l.msg).startsWith('Database pool wedged'));
        expect(lines).toHaveLength(1);
        expect(lines[0]!.msg).toMatch(/from the embedded database in this process/);
      } finally {
        await leaked.query('ROLLBACK');
        leaked.release();
      }
      expect(await eventually(async () => (await get(t.url, '/healthz')).status === 200, 10_000)).toBe(true);
    });
  });
});
