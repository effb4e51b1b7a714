import pg from 'pg';
import { preparedName } from '../src/database/prepared-statements.js';
import { adminQuery, createTestDatabase, serverUrl, TestDatabase, withDatabase } from './support/database.js';
import { get } from './support/http.js';
import { eventually, exitWithin, startServer } from './support/processes.js';
import { freePort, startTestApp, TestApp } from './support/test-app.js';

// The pooler tier (test/pooler/) runs these settings against PgBouncer in each mode; here, what a
// PostgreSQL server alone can show: the start-up check of DATABASE_DIRECT_URL, which connection carries
// what, and readiness following the credential listener.
const onServer = serverUrl() ? describe : describe.skip;

/** The log lines at error level or above, parsed. */
function problems(output: string): { msg: string; err?: unknown }[] {
  return output
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string; err?: unknown })
    .filter((l) => l.level >= 50);
}

describe('prepared statement names', () => {
  it('name a text by its content: one text one name in every process, two texts two names, within PostgreSQL’s 63 bytes', () => {
    const text = 'SELECT id FROM events WHERE starts_at >= $1';
    expect(preparedName(text)).toBe(preparedName(`${text}`));
    expect(preparedName(text)).not.toBe(preparedName('SELECT id FROM events WHERE starts_at < $1'));
    expect(preparedName(text)).toMatch(/^agora_[0-9a-f]{32}$/);
    expect(Buffer.byteLength(preparedName(text))).toBeLessThanOrEqual(63);
  });
});

onServer('DATABASE_DIRECT_URL on a PostgreSQL server', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('refuses to start, in one line, when it reaches another database than DATABASE_URL', async () => {
    const other = `agora_other_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    await adminQuery(`CREATE DATABASE ${other}`);
    try {
      const server = startServer({
        ...db.env,
        DATABASE_DIRECT_URL: withDatabase(serverUrl()!, other),
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
      });
      expect(await exitWithin(server, 30_000)).toBe(1);
      const lines = problems(server.output());
      expect(lines).toHaveLength(1);
      expect(lines[0]!.err).toBeUndefined();
      expect(lines[0]!.msg).toMatch(
        /^Cannot start: DATABASE_DIRECT_URL \(.*\) and DATABASE_URL \(.*\) do not reach the same database \(a notification sent through one was not heard on the other within 5 s\)$/,
      );
    } finally {
      await adminQuery(`DROP DATABASE IF EXISTS ${other} WITH (FORCE)`);
    }
  });

  it('carries the credential listener; the serving pool stays on DATABASE_URL', async () => {
    // Two roles tell the connections apart in pg_stat_activity: DATABASE_URL logs in as a role of its own.
    const role = `agora_pool_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    await adminQuery(`CREATE ROLE ${role} LOGIN SUPERUSER`);
    let app: TestApp | undefined;
    const url = new URL(db.env.DATABASE_URL!);
    const direct = url.toString();
    url.username = role;
    try {
      app = await startTestApp({ DATABASE_URL: url.toString(), DATABASE_DIRECT_URL: direct }, { databaseEnv: db.env });
      expect((await get(app.url, '/readyz')).status).toBe(200);
      await get(app.url, '/api/v1/events');
      const client = new pg.Client({ connectionString: direct });
      await client.connect();
      try {
        const { rows } = await client.query<{ usename: string; application_name: string }>(
          'SELECT usename, application_name FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        );
        const listener = rows.filter((r) => r.application_name === 'agora-credential-listener');
        expect(listener.map((r) => r.usename)).toEqual(['postgres']);
        const serving = rows.filter((r) => r.application_name === 'agora');
        expect(serving.length).toBeGreaterThan(0);
        expect(new Set(serving.map((r) => r.usename))).toEqual(new Set([role]));
      } finally {
        await client.end();
      }
    } finally {
      await app?.close();
      await adminQuery(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
    }
  });
});

onServer('the credential listener proves that it hears', () => {
  it('keeps the cache off and the instance unready, with one error line, when what DATABASE_URL sends is not heard on its connection', async () => {
    // What the start-up check refuses (it is skipped here), the listener must still find at run time: its
    // connection reaches another database, as a pooler in transaction mode leaves LISTEN on a session it drops.
    const served = await createTestDatabase();
    const heard = await createTestDatabase();
    let app: TestApp | undefined;
    try {
      app = await startTestApp(
        { DATABASE_URL: served.env.DATABASE_URL!, DATABASE_DIRECT_URL: heard.env.DATABASE_URL! },
        { databaseEnv: served.env, checkPooling: false },
      );
      const res = await get(app.url, '/readyz');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'unavailable', database: 'ok', credentialListener: 'not listening' });
      const errors = app.logs.filter((l) => Number(l.level) >= 50).map((l) => String(l.msg));
      expect(errors).toEqual([
        expect.stringMatching(
          /^Revocations may not reach this instance: a notification sent through DATABASE_URL was not heard on the credential listener's connection within 2 s\./,
        ),
      ]);
      // It keeps trying, and keeps failing: never ready, never a second error line.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      expect((await get(app.url, '/readyz')).status).toBe(503);
      expect(app.logs.filter((l) => Number(l.level) >= 50)).toHaveLength(1);
    } finally {
      await app?.close();
      await served.drop();
      await heard.drop();
    }
  }, 60_000);
});

onServer('readiness and the credential listener', () => {
  let app: TestApp;
  let database: string;
  beforeAll(async () => {
    app = await startTestApp();
    database = new URL(app.databaseEnv.DATABASE_URL!).pathname.slice(1);
  });
  afterAll(async () => {
    await adminQuery(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`).catch(() => undefined);
    await app.close();
  });

  it('stays ready through a short loss of the listener, is not ready once it has not listened for 10 s, and is ready again when it listens', async () => {
    expect((await get(app.url, '/readyz')).status).toBe(200);
    // The pool keeps its open connections; only a new one (the listener's reconnection) is refused.
    await adminQuery(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
    await adminQuery(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database}' AND application_name = 'agora-credential-listener'`,
    );
    const lost = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await get(app.url, '/readyz')).status).toBe(200);

    let answer: { status: number; body: Record<string, unknown> } | undefined;
    expect(
      await eventually(async () => {
        const res = await get(app.url, '/readyz');
        answer = { status: res.status, body: res.body };
        return res.status === 503;
      }, 20_000),
    ).toBe(true);
    expect(Date.now() - lost).toBeGreaterThanOrEqual(9_500);
    expect(answer!.body).toEqual({ status: 'unavailable', database: 'ok', credentialListener: 'not listening' });

    await adminQuery(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
    expect(await eventually(async () => (await get(app.url, '/readyz')).status === 200, 10_000)).toBe(true);
  }, 60_000);
});
