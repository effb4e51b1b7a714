import pg from 'pg';
import { cli, FLEET_SECRET_KEY, Fleet, Instance, scratchDatabase, ScratchDatabase, startFleet } from '../fleet/fleet.js';
import { TEST_PASSWORD } from '../support/fixtures.js';
import { PgBouncer, PoolMode, startPgBouncers } from './pgbouncer.js';

/**
 * The pooler tier (test/pooler/): built server processes behind PgBouncers of the tier's own, in
 * transaction, session and statement mode, in front of one PostgreSQL server. `.ci/run` gives it a
 * throwaway cluster and installs PgBouncer (Debian's) when it is missing:
 *   POOLER_DATABASE_URL   a database on that server (trust authentication) to connect to while creating
 *                         and dropping the tier's scratch databases, one per test file (DATABASE_URL is
 *                         used when it is unset); the PgBouncers point at the same server
 *   PGBOUNCER             the binary (default /usr/sbin/pgbouncer)
 *   PGBOUNCER_USER        the user PgBouncer switches to when the tests run as root (default postgres)
 *   POOLER_LISTINGS_PER_INSTANCE   listings each instance answers in the listing test (default 1,500)
 * Locally: `createdb -h 127.0.0.1 -U postgres agora_pooler_admin`, then
 *   POOLER_DATABASE_URL=postgres://postgres@127.0.0.1:5432/agora_pooler_admin DATABASE_URL= npm run -s test:pooler
 */
export const POOLER_ADMIN_URL = process.env.POOLER_DATABASE_URL || process.env.DATABASE_URL || undefined;

export function requirePoolerAdminUrl(): string {
  if (!POOLER_ADMIN_URL) {
    throw new Error('The pooler tier needs a PostgreSQL server: set POOLER_DATABASE_URL (or DATABASE_URL) to a database on it');
  }
  return POOLER_ADMIN_URL;
}

/**
 * Server connections per database in transaction mode: fewer than the instances' pooled connections
 * together, so that every instance's transactions really run on server connections another instance
 * used before.
 */
export const TRANSACTION_POOL_SIZE = 5;
/** Session mode gives each client connection a server connection of its own for as long as it lasts. */
export const SESSION_POOL_SIZE = 60;

/** A PgBouncer per mode asked for, in front of the tier's server. */
export function startBouncers(...modes: PoolMode[]): Promise<PgBouncer[]> {
  return startPgBouncers(
    requirePoolerAdminUrl(),
    ...modes.map((mode) => ({ mode, poolSize: mode === 'transaction' ? TRANSACTION_POOL_SIZE : SESSION_POOL_SIZE })),
  );
}

/** A fresh, empty database of the tier's own. */
export function poolerDatabase(): Promise<ScratchDatabase> {
  return scratchDatabase(requirePoolerAdminUrl(), 'agora_pooler');
}

/**
 * The database settings of an instance behind `bouncer`, as docs/deploy.md gives them for its mode:
 * transaction mode also names the direct connection (DATABASE_DIRECT_URL), for LISTEN and the migration
 * lock; session mode is the default and needs nothing else.
 */
export function pooledEnv(bouncer: PgBouncer, db: ScratchDatabase): Record<string, string> {
  const url = bouncer.url(db.name);
  return bouncer.mode === 'transaction'
    ? { DATABASE_URL: url, DATABASE_POOLING: 'transaction', DATABASE_DIRECT_URL: db.url }
    : { DATABASE_URL: url };
}

/** Settings for the CLI, which the tests use to make fixtures: straight to the server. */
export function directEnv(db: ScratchDatabase): Record<string, string> {
  return { DATABASE_URL: db.url, SECRET_KEY: FLEET_SECRET_KEY };
}

/** `count` instances behind `bouncer`, started at once, each ready (/readyz 200). */
export function startPooledFleet(
  bouncer: PgBouncer,
  db: ScratchDatabase,
  count: number,
  extraEnv: Record<string, string> = {},
): Promise<Fleet> {
  const env = { ...pooledEnv(bouncer, db), ...extraEnv };
  return startFleet(env.DATABASE_URL!, count, env);
}

/**
 * The server-side statement bounds docs/deploy.md has the operator set for a transaction pooler (no
 * per-connection SET passes one), here for the tests' role in this database only.
 */
export async function setRoleBounds(db: ScratchDatabase): Promise<void> {
  await db.query(`ALTER ROLE CURRENT_USER IN DATABASE ${db.name} SET statement_timeout = '10s'`);
  await db.query(`ALTER ROLE CURRENT_USER IN DATABASE ${db.name} SET idle_in_transaction_session_timeout = '60s'`);
}

/** What an instance logged at level warn or above about the server-side statement bounds. */
export function boundWarnings(instance: Instance): string[] {
  return instance
    .logs()
    .filter((l) => Number(l.level) >= 40 && /statement_timeout|idle_in_transaction_session_timeout/.test(String(l.msg)))
    .map((l) => String(l.msg));
}

/** Applies the migrations through the direct connection, as a migration job would. */
export async function migrate(db: ScratchDatabase): Promise<void> {
  await cli(directEnv(db), 'migration:run');
}

let users = 0;
/** A user made with the CLI, with the tests' password. */
export async function newUser(db: ScratchDatabase): Promise<string> {
  const username = `pooler${process.pid}x${++users}`;
  await cli(
    directEnv(db),
    'users:create',
    '--username',
    username,
    '--email',
    `${username}@example.com`,
    '--name',
    'Pooler User',
    '--password',
    TEST_PASSWORD,
  );
  return username;
}

/**
 * Other clients of the pooler, as instances already serving would be: `clients` connections to
 * `database` through `bouncer`, each running one short transaction after another until stopped (then
 * the number run). Through a transaction pooler they keep moving server connections from client to client.
 */
export function keepBusy(bouncer: PgBouncer, database: string, clients = 3): { stop(): Promise<number> } {
  let running = true;
  let transactions = 0;
  const loops = Array.from({ length: clients }, async () => {
    const client = new pg.Client({ connectionString: bouncer.url(database) });
    client.on('error', () => undefined);
    try {
      await client.connect();
      while (running) {
        await client.query('SELECT pg_sleep(0.005)');
        transactions++;
      }
    } finally {
      await client.end().catch(() => undefined);
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return transactions;
    },
  };
}

/** Runs `work` once per slot, `concurrency` at a time, until `total` have run. */
export async function runConcurrently(total: number, concurrency: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await work(next++);
    }),
  );
}
