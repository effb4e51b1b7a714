import type pg from 'pg';
import { DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/config.schema.js';
import { DatabaseTarget } from './database-target.js';
import { ENTITIES } from './entities.js';
import { MIGRATIONS } from './migrations/index.js';
import type { OwnedPool } from './owned-pool.js';
import { driverTypes } from './timestamps.js';

/**
 * Which process a data source serves. `serving` is the server's pool, the one that answers requests:
 * only it gets the statement bounds and the pool wait bound. The CLI, migrations and ormconfig.ts say
 * `serving: false` (a migration or a seed may rightly run for minutes, and waits on the migration lock).
 */
export interface DataSourceRole {
  serving: boolean;
  poolSize?: number;
  owned?: OwnedPool;
}

/**
 * The one TypeORM configuration, shared by the application, the CLI and ormconfig.ts. The serving pool
 * connects through DATABASE_URL; the others (migrations, whose lock is a session's; the CLI) through
 * the session connection, DATABASE_DIRECT_URL when set.
 */
export function dataSourceOptions(config: AppConfig, target: DatabaseTarget, role: DataSourceRole): DataSourceOptions {
  return {
    type: 'postgres',
    ...(role.owned ? { driver: role.owned.driver } : {}),
    ...(role.serving ? target.connection : target.sessionConnection),
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    migrationsRun: false,
    synchronize: false,
    // Generated uuid keys default to gen_random_uuid(), built into PostgreSQL (13+) and PGlite, as in the
    // hand-written migrations; uuid_generate_v4() needs uuid-ossp, which the embedded database lacks.
    // No extension is created on connect: the schema changes through migrations only.
    uuidExtension: 'pgcrypto',
    installExtensions: false,
    // Failed queries surface as exceptions and are logged by the edges, without their parameters.
    logging: false,
    connectTimeoutMS: config.database.connectTimeoutMs,
    extra: {
      // PGlite executes one statement at a time, and its socket multiplexer can interleave the
      // protocol messages of concurrent connections (wrong results were seen under load): on the
      // embedded database each process uses a single connection, which loses no parallelism. (The
      // migration runner asks for two: an idle one holding the advisory lock, one migrating.)
      max: role.poolSize ?? (target.kind === 'embedded' ? 1 : config.database.poolSize),
      ...SESSION_SETTINGS,
      ...(target.kind === 'server' ? serverTimeouts(config, role.serving, target.pooling === 'session') : {}),
    },
  };
}

/**
 * The longest a statement of this pool waits for a connection before it is shed (0: no bound of ours,
 * only pg-pool's connect timeout). Only the serving pool on a PostgreSQL server: on the embedded
 * database the one connection is shared by every request and PGlite blocks the event loop while it
 * runs a statement (the timer would fire late, and moderate concurrency would be refused where it
 * queued a few milliseconds), and the CLI has no client to retry.
 */
export function poolWaitTimeoutMs(config: AppConfig, target: DatabaseTarget, role: DataSourceRole): number {
  return role.serving && target.kind === 'server' ? config.database.poolWaitTimeoutMs : 0;
}

/**
 * The bounds on a PostgreSQL server's connections (docs/operations.md, "Timeouts"). TCP keep-alive on
 * every connection finds a peer that vanished while the connection was idle (after the kernel's own
 * probes: Node sets only the idle delay). The serving pool also sets `statement_timeout` and
 * `idle_in_transaction_session_timeout` with a `SET` on each new connection before the pool hands it
 * out (pg-pool's `onConnect`), not as start-up parameters, which PgBouncer refuses; and it gives up
 * waiting for an answer a little after the statement timeout (pg's `query_timeout`: what still ends a
 * statement when the link drops packets and the server never hears of it). Migrations and the CLI get
 * no statement bounds, not even the role's (they `SET` both to 0): a migration may rightly run for
 * minutes, and waits for the migration lock while another instance migrates.
 *
 * Behind a pooler in transaction mode (DATABASE_POOLING=transaction) there is no `SET`: it would stay on
 * the server session the pooler gave this connection for that one statement, and bind whichever client
 * gets that session next, while this pool's next statements meet other sessions. The server-side bounds
 * are then the role's (`ALTER ROLE … SET statement_timeout`, docs/deploy.md; checked at start-up,
 * src/database/pooling-check.ts); the client-side `query_timeout` stays.
 *
 * Not on the embedded database: its socket is local (no link to lose, no keep-alive), PGlite serves
 * every connection from one session (a `statement_timeout` set by one would bind all), and its
 * statements run on this process's own thread, so no client-side timer could fire during one anyway.
 */
function serverTimeouts(config: AppConfig, serving: boolean, ownSessions: boolean): Record<string, unknown> {
  const { keepAliveMs, statementTimeoutMs, queryTimeoutMs, idleInTransactionTimeoutMs } = config.database;
  const settings = serving
    ? [
        // A session a pooler in session mode hands on may still hold the previous client's statements
        // (PgBouncer with an empty server_reset_query): named as this process names its own, they would
        // collide with its first Parse ("already exists").
        ...(ownSessions ? ['DEALLOCATE ALL'] : []),
        ...(ownSessions && statementTimeoutMs > 0 ? [`SET statement_timeout = ${Math.trunc(statementTimeoutMs)}`] : []),
        ...(ownSessions && idleInTransactionTimeoutMs > 0
          ? [`SET idle_in_transaction_session_timeout = ${Math.trunc(idleInTransactionTimeoutMs)}`]
          : []),
      ]
    : // Unbounded even where the role has bounds (as behind a transaction pooler, docs/deploy.md): these
      // connections are sessions of their own (DATABASE_DIRECT_URL, or DATABASE_URL in session mode).
      ['SET statement_timeout = 0', 'SET idle_in_transaction_session_timeout = 0'];
  return {
    keepAlive: true,
    keepAliveInitialDelayMillis: keepAliveMs,
    ...(serving && statementTimeoutMs > 0 ? { query_timeout: queryTimeoutMs } : {}),
    // A failure here ends the connection and fails the statement that asked for it (pg-pool).
    ...(settings.length > 0 ? { onConnect: (client: pg.Client) => client.query(settings.join('; ')) } : {}),
  };
}

const SESSION_SETTINGS = { application_name: 'agora', types: driverTypes };
