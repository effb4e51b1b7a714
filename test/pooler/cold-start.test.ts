import { MIGRATIONS } from '../../src/database/migrations/index.js';
import { Fleet, FLEET_SECRET_KEY, ScratchDatabase } from '../fleet/fleet.js';
import { runCli, startServer, waitForHttp } from '../support/processes.js';
import { freePort } from '../support/test-app.js';
import { PgBouncer } from './pgbouncer.js';
import { boundWarnings, keepBusy, pooledEnv, poolerDatabase, startBouncers, startPooledFleet } from './pooler.js';

/** src/database/migrate.ts: the advisory lock every starting instance takes around the migrations. */
const MIGRATION_LOCK_KEY = 727_274_001;
/** How long a later instance may take to be ready on a migrated database (a few seconds on an idle machine). */
const LATER_START_BOUND_MS = 60_000;

/** Advisory locks on the migration key in this database, as the server itself lists them. */
function migrationLocksIn(db: ScratchDatabase) {
  return db.query<{ pid: number; granted: boolean }>(
    `SELECT l.pid, l.granted FROM pg_locks l JOIN pg_database d ON d.oid = l.database
      WHERE l.locktype = 'advisory' AND l.classid = 0 AND l.objid = $1 AND d.datname = $2`,
    [MIGRATION_LOCK_KEY, db.name],
  );
}

describe.each(['transaction', 'session'] as const)('starting on an empty database behind PgBouncer in %s mode', (mode) => {
  let bouncer: PgBouncer;
  let db: ScratchDatabase;
  let fleet: Fleet | undefined;

  beforeAll(async () => {
    db = await poolerDatabase();
    [bouncer] = await startBouncers(mode);
  });

  afterAll(async () => {
    const codes = fleet ? await fleet.stop() : [];
    await bouncer?.stop();
    await db?.drop();
    expect(codes).toEqual(fleet ? [0, 0, 0, 0, 0] : []);
  });

  const migrationLocks = () => migrationLocksIn(db);

  it('five instances started at once, while other clients keep the pooler busy, all become ready, apply the migrations once and release the migration lock', async () => {
    const traffic = keepBusy(bouncer, db.name);
    const started = performance.now();
    let others: number;
    try {
      fleet = await startPooledFleet(bouncer, db, 5);
    } finally {
      others = await traffic.stop();
    }
    const allReadyMs = performance.now() - started;
    for (const instance of fleet.instances) expect((await fetch(`${instance.url}/readyz`)).status).toBe(200);
    const locked = await migrationLocks();
    console.log(
      `pooler ${mode}: five instances ready ${Math.round(allReadyMs)} ms after starting at once (${others} other transactions through ` +
        `the pooler meanwhile); migration locks held then: ${locked.length}`,
    );

    const applied = await db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY id');
    expect(applied.map((r) => r.name)).toEqual(MIGRATIONS.map((m) => m.name));
    // The one that held the lock first applied them all, the others none.
    const appliedBy = fleet.instances.map(
      (i) => i.logs().find((l) => l.msg === 'Database ready')?.migrationsApplied as string[] | undefined,
    );
    expect(appliedBy.map((list) => list?.length).sort()).toEqual([0, 0, 0, 0, MIGRATIONS.length]);
    expect(locked).toEqual([]);
  });

  it('a sixth instance started later is ready promptly, and leaves no migration lock either', async () => {
    expect(fleet).toBeDefined();
    const traffic = keepBusy(bouncer, db.name);
    const port = await freePort();
    const sixth = startServer({
      ...pooledEnv(bouncer, db),
      SECRET_KEY: FLEET_SECRET_KEY,
      BASE_URL: fleet!.site,
      DATABASE_POOL_SIZE: '4',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
    });
    const started = performance.now();
    let readyMs: number | undefined;
    try {
      await waitForHttp(`http://127.0.0.1:${port}/readyz`, sixth, LATER_START_BOUND_MS);
      readyMs = performance.now() - started;
    } catch {
      // reported below, with the locks
    } finally {
      if (sixth.child.exitCode === null) sixth.child.kill('SIGTERM');
      await traffic.stop();
    }
    const code = await sixth.exited;
    const locked = await migrationLocks();
    console.log(
      `pooler ${mode}: a sixth instance ready after ${readyMs === undefined ? `more than ${LATER_START_BOUND_MS}` : Math.round(readyMs)} ms; ` +
        `migration locks held after it: ${locked.length}`,
    );
    expect(readyMs).toBeDefined();
    expect(code).toBe(0);
    expect(locked).toEqual([]);
  });

  it(`${mode === 'transaction' ? 'warns' : 'does not warn'} at start-up that the role sets no statement bounds on the server`, () => {
    // None are set on the role here: behind a transaction pooler, where no SET can pass, each instance says what to run.
    expect(fleet).toBeDefined();
    for (const instance of fleet!.instances) {
      expect(boundWarnings(instance)).toEqual(
        mode === 'transaction'
          ? [
              expect.stringMatching(/statement_timeout is 0 .*ALTER ROLE .* SET statement_timeout = '10s'/),
              expect.stringMatching(/ALTER ROLE .* SET idle_in_transaction_session_timeout = '60s'/),
            ]
          : [],
      );
    }
  });

  it('the CLI with the same settings: two `migration:run` at once on another empty database, the pooler busy, apply each migration once and leave no lock', async () => {
    const other = await poolerDatabase();
    try {
      const env = { ...pooledEnv(bouncer, other), SECRET_KEY: FLEET_SECRET_KEY };
      const traffic = keepBusy(bouncer, other.name);
      const runs = await Promise.all([runCli(env, 'migration:run'), runCli(env, 'migration:run')]).finally(() => traffic.stop());
      expect(runs.map((r) => [r.code, r.stderr])).toEqual([
        [0, ''],
        [0, ''],
      ]);
      expect(runs.map((r) => (r.json.applied as string[]).length).sort()).toEqual([0, MIGRATIONS.length]);
      const applied = await other.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY id');
      expect(applied.map((r) => r.name)).toEqual(MIGRATIONS.map((m) => m.name));
      expect(await migrationLocksIn(other)).toEqual([]);
    } finally {
      await other.drop();
    }
  });
});
