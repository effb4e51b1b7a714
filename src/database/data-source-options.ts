import { DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/config.schema.js';
import { DatabaseTarget } from './database-target.js';
import { ENTITIES } from './entities.js';
import { MIGRATIONS } from './migrations/index.js';
import type { OwnedPool } from './owned-pool.js';
import { driverTypes } from './timestamps.js';

/** The one TypeORM configuration, shared by the application, the CLI and ormconfig.ts. */
export function dataSourceOptions(
  config: AppConfig,
  target: DatabaseTarget,
  overrides: { poolSize?: number; owned?: OwnedPool } = {},
): DataSourceOptions {
  return {
    type: 'postgres',
    ...(overrides.owned ? { driver: overrides.owned.driver } : {}),
    ...target.connection,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    migrationsRun: false,
    synchronize: false,
    // Failed queries surface as exceptions and are logged by the edges, without their parameters.
    logging: false,
    connectTimeoutMS: config.database.connectTimeoutMs,
    extra: {
      // PGlite executes one statement at a time, and its socket multiplexer can interleave the
      // protocol messages of concurrent connections (wrong results were seen under load): on the
      // embedded database each process uses a single connection, which loses no parallelism. (The
      // migration runner asks for two: an idle one holding the advisory lock, one migrating.)
      max: overrides.poolSize ?? (target.kind === 'embedded' ? 1 : config.database.poolSize),
      ...SESSION_SETTINGS,
      ...(target.kind === 'server' ? serverTimeouts(config, { serving: overrides.owned !== undefined }) : {}),
    },
  };
}

/**
 * The bounds on a PostgreSQL server's connections (docs/operations.md, "Timeouts"). TCP keep-alive on
 * every connection finds a peer that vanished while the connection was idle. The serving pool (the one
 * the project holds) also sends `statement_timeout` and `idle_in_transaction_session_timeout` as
 * start-up parameters of each connection, and gives up waiting for an answer a little after the
 * statement timeout (pg's `query_timeout`: what still ends a statement when the link drops packets and
 * the server never hears of it). Migrations and the CLI get no statement bounds: a migration may
 * rightly run for minutes, and waits for the migration lock while another instance migrates.
 *
 * Not on the embedded database: its socket is local (no link to lose, no keep-alive), PGlite serves
 * every connection from one session (a `statement_timeout` set by one would bind all), and its
 * statements run on this process's own thread, so no client-side timer could fire during one anyway.
 */
function serverTimeouts(config: AppConfig, { serving }: { serving: boolean }): Record<string, unknown> {
  const { keepAliveMs, statementTimeoutMs, queryTimeoutMs, idleInTransactionTimeoutMs } = config.database;
  return {
    keepAlive: true,
    keepAliveInitialDelayMillis: keepAliveMs,
    ...(serving && statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs, query_timeout: queryTimeoutMs } : {}),
    ...(serving && idleInTransactionTimeoutMs > 0 ? { idle_in_transaction_session_timeout: idleInTransactionTimeoutMs } : {}),
  };
}

const SESSION_SETTINGS = { application_name: 'agora', types: driverTypes };
