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
    },
  };
}

const SESSION_SETTINGS = { application_name: 'agora', types: driverTypes };
