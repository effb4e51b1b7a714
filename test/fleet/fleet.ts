import pg from 'pg';
import { withDatabase } from '../support/database.js';
import { runCli, ServerProcess, startServer, waitForHttp } from '../support/processes.js';
import { TEST_PASSWORD } from '../support/fixtures.js';
import { freePort } from '../support/test-app.js';

/**
 * The fleet tier: several built server processes (`node dist/src/main.js`) on one PostgreSQL database,
 * as in production behind a load balancer. `.ci/run` gives it a throwaway cluster:
 *   FLEET_DATABASE_URL   a database on that cluster to connect to while creating and dropping the
 *                        tier's own scratch databases (DATABASE_URL is used when it is unset)
 */
export const ADMIN_URL = process.env.FLEET_DATABASE_URL || process.env.DATABASE_URL || undefined;

/** The same on every instance, as production requires: signing keys, CSRF tokens and the flash depend on it. */
export const FLEET_SECRET_KEY = 'fleet-tier-secret-key-5b0e93c1d7a24f68e1b9';

export function requireAdminUrl(): string {
  if (!ADMIN_URL) {
    throw new Error('The fleet tier needs a PostgreSQL server: set FLEET_DATABASE_URL (or DATABASE_URL) to a database on it');
  }
  return ADMIN_URL;
}

async function admin(sql: string, adminUrl = requireAdminUrl()): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export interface ScratchDatabase {
  name: string;
  url: string;
  query<T = Record<string, unknown>>(sql: string, values?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

/**
 * An empty database of the tier's own on the server: no tables, no migrations. `adminUrl` is a database
 * on the server to create it from (another tier's, e.g. the pooler tier's; the fleet tier's by default).
 */
export async function scratchDatabase(adminUrl = requireAdminUrl(), prefix = 'agora_fleet'): Promise<ScratchDatabase> {
  const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  await admin(`CREATE DATABASE ${name}`, adminUrl);
  const url = withDatabase(adminUrl, name);
  return {
    name,
    url,
    async query<T>(sql: string, values: unknown[] = []): Promise<T[]> {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(sql, values)).rows as T[];
      } finally {
        await client.end();
      }
    },
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`, adminUrl),
  };
}

export interface Instance {
  name: string;
  url: string;
  server: ServerProcess;
  /** The JSON lines it has logged so far. */
  logs(): Record<string, unknown>[];
}

export interface Fleet {
  instances: Instance[];
  /** The public address every instance knows the site by (BASE_URL): the first instance's. */
  site: string;
  env: Record<string, string>;
  stop(): Promise<(number | null)[]>;
}

/**
 * Starts `count` server processes at the same moment on `databaseUrl` and waits until each is ready.
 * They share BASE_URL and SECRET_KEY, as instances behind one load balancer do.
 */
export async function startFleet(databaseUrl: string, count: number, extraEnv: Record<string, string> = {}): Promise<Fleet> {
  const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
  const site = `http://127.0.0.1:${ports[0]}`;
  const env = { DATABASE_URL: databaseUrl, SECRET_KEY: FLEET_SECRET_KEY, BASE_URL: site, DATABASE_POOL_SIZE: '4', ...extraEnv };
  const instances = ports.map((port, i): Instance => {
    const server = startServer({ ...env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info' });
    return {
      name: String.fromCharCode(65 + i),
      url: `http://127.0.0.1:${port}`,
      server,
      logs: () =>
        server
          .output()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>),
    };
  });
  const stop = async () => {
    for (const { server } of instances) if (server.child.exitCode === null) server.child.kill('SIGTERM');
    return Promise.all(instances.map((i) => i.server.exited));
  };
  try {
    await Promise.all(instances.map((i) => waitForHttp(`${i.url}/readyz`, i.server, 120_000)));
  } catch (err) {
    await stop();
    throw err;
  }
  return { instances, site, env: { DATABASE_URL: databaseUrl, SECRET_KEY: FLEET_SECRET_KEY }, stop };
}

/** Runs the CLI against the fleet's database; its JSON answer, or an error with its stderr. */
export async function cli(env: Record<string, string>, ...args: string[]): Promise<Record<string, any>> {
  const result = await runCli(env, ...args);
  if (result.code !== 0) throw new Error(`cli ${args[0]} exited ${result.code}: ${result.stderr}`);
  return result.json;
}

/** A user made with the CLI on the fleet's database, with the tests' password. */
export async function createFleetUser(env: Record<string, string>, username: string, name = 'Fleet User'): Promise<void> {
  await cli(env, 'users:create', '--username', username, '--email', `${username}@example.com`, '--name', name, '--password', TEST_PASSWORD);
}
