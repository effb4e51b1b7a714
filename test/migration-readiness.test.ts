import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminQuery, createTestDatabase, serverUrl, TestDatabase, withDatabase } from './support/database.js';
import { exitWithin, runCli, startServer, waitForHttp } from './support/processes.js';
import { freePort } from './support/test-app.js';

const embedded = !serverUrl();

/** The exit code, or `'running'` if the process has not exited within `ms` (it is then killed). */
/** A database with no Agora schema at all: a new PostgreSQL database, or an empty data directory. */
async function emptyDatabase(): Promise<TestDatabase> {
  const url = serverUrl();
  if (url) {
    const name = `agora_empty_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    await adminQuery(`CREATE DATABASE ${name}`);
    return { env: { DATABASE_URL: withDatabase(url, name) }, drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
  }
  const dir = mkdtempSync(join(tmpdir(), 'agora-empty-'));
  return { env: { DATA_DIR: dir, DATABASE_URL: '' }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

describe('readiness and migrations applied by another process', () => {
  let db: TestDatabase;
  let reverted: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    // The latest migration undone: to this code, the database has one migration pending.
    const revert = await runCli(db.env, 'migration:revert');
    expect(revert.code).toBe(0);
    reverted = revert.json.reverted as string;
  });
  afterAll(() => db.drop());

  it('is not ready while migrations are pending with MIGRATIONS_RUN=false, and ready once another process applies them', async () => {
    const port = await freePort();
    const server = startServer({ ...db.env, PORT: String(port), HOST: '127.0.0.1', MIGRATIONS_RUN: 'false' });
    const readyz = `http://127.0.0.1:${port}/readyz`;
    try {
      await waitForHttp(`http://127.0.0.1:${port}/healthz`, server);
      const pending = await fetch(readyz);
      expect(pending.status).toBe(503);
      expect(await pending.json()).toEqual({ status: 'unavailable', database: 'ok', migrations: 'pending' });
      expect(server.output()).toMatch(/1 migration is pending and MIGRATIONS_RUN=false: \/readyz answers 503/);

      // A data command does not migrate a database it shares with a server (on the embedded database it
      // goes through this server's socket): it refuses, in one line.
      const refused = await runCli(db.env, 'users:list');
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim()).toMatch(/^agora: The database \(.*\) has 1 pending migration: run `npm run migration:run` first$/);
      expect((await fetch(readyz)).status).toBe(503);

      const migrated = await runCli(db.env, 'migration:run');
      expect(migrated.json).toEqual({ applied: [reverted] });
      const ready = await fetch(readyz);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ok', database: 'ok' });
      expect((await runCli(db.env, 'users:list')).code).toBe(0);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});

describe('a database without the Agora schema', () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await emptyDatabase();
  });
  afterEach(() => db.drop());

  it('stops the server at start-up with one line saying what to run, when MIGRATIONS_RUN=false', async () => {
    const server = startServer({ ...db.env, PORT: String(await freePort()), HOST: '127.0.0.1', MIGRATIONS_RUN: 'false' });
    expect(await exitWithin(server, 30_000)).toBe(1);
    const output = server.output();
    expect(output).not.toMatch(/\bat .*\.js:\d+/); // no stack trace
    const problems = output
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: number; msg: string; err?: unknown })
      .filter((l) => l.level >= 50);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.err).toBeUndefined();
    expect(problems[0]!.msg).toMatch(
      /^Cannot start: The database \(.*\) has no Agora schema: run `npm run migration:run` \(or set MIGRATIONS_RUN=true\)$/,
    );
  });

  (embedded ? it.skip : it)(
    'refuses a data command on PostgreSQL, saying to run migration:run, and leaves the database untouched',
    async () => {
      const refused = await runCli(db.env, 'users:list');
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim()).toMatch(/^agora: The database \(.*\) has no Agora schema: run `npm run migration:run` first$/);
      const migrated = await runCli(db.env, 'migration:run');
      expect(migrated.json.applied.length).toBeGreaterThan(0);
    },
  );

  (embedded ? it : it.skip)('migrates an embedded database the CLI opens itself, as on a fresh checkout', async () => {
    const listed = await runCli(db.env, 'users:list');
    expect(listed.code).toBe(0);
    expect((await runCli(db.env, 'migration:run')).json).toEqual({ applied: [] });
  });
});
