import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config.schema.js';
import { dataSourceOptions } from './data-source-options.js';
import { DatabaseTarget } from './database-target.js';
import { runMigrations } from './migrate.js';
import { pendingMigrations } from './migration-status.js';
import { checkPooling, DatabaseSettingError } from './pooling-check.js';

export { DatabaseSettingError } from './pooling-check.js';

export class DatabaseUnavailableError extends Error {
  constructor(target: DatabaseTarget, cause: unknown) {
    super(`Cannot reach the database (${target.description}): ${(cause as Error).message}`);
    this.name = 'DatabaseUnavailableError';
  }
}

/** The database has no Agora schema and this process was told not to migrate: nothing could work. */
export class NoSchemaError extends DatabaseSettingError {
  constructor(target: DatabaseTarget, how: string) {
    super(`The database (${target.description}) has no Agora schema: ${how}`);
    this.name = 'NoSchemaError';
  }
}

export interface PreparedDatabase {
  /** Migrations this process applied. */
  applied: string[];
  /** Migrations still pending (only when not migrating: another process or job is expected to apply them). */
  pending: number;
  /** What works with less protection than configured (src/database/pooling-check.ts), for the start-up log. */
  warnings: string[];
}

/**
 * Connects once to check the database answers, checks that its connections are what DATABASE_POOLING
 * says (DatabaseSettingError otherwise), and applies pending migrations when asked to. When not asked
 * to, refuses a database without any schema (NoSchemaError, with `noSchemaHint` saying what to do), and
 * counts the pending migrations. Migrations run on the session connection (DATABASE_DIRECT_URL when set).
 */
export async function prepareDatabase(
  config: AppConfig,
  target: DatabaseTarget,
  options: { migrate: boolean; noSchemaHint?: string; checkPooling?: boolean },
): Promise<PreparedDatabase> {
  const dataSource = new DataSource(dataSourceOptions(config, target, { serving: false, poolSize: 2 }));
  try {
    await dataSource.initialize();
  } catch (err) {
    throw new DatabaseUnavailableError(target, err);
  }
  try {
    // A worker's primary has checked the same settings before forking it.
    const warnings =
      options.checkPooling === false
        ? []
        : await checkPooling(config, target).catch((err: unknown) => {
            throw err instanceof DatabaseSettingError ? err : new DatabaseUnavailableError(target, err);
          });
    if (options.migrate) return { applied: (await runMigrations(dataSource)).map((m) => m.name), pending: 0, warnings };
    const pending = await pendingMigrations(dataSource);
    if (pending === null) {
      throw new NoSchemaError(target, options.noSchemaHint ?? 'run `npm run migration:run` (or set MIGRATIONS_RUN=true)');
    }
    return { applied: [], pending, warnings };
  } finally {
    await dataSource.destroy();
  }
}

/** The start-up warning of a server that serves, but is not ready, until another process migrates. */
export function pendingMigrationsWarning(pending: number): string {
  return (
    `${pending} migration${pending === 1 ? ' is' : 's are'} pending and MIGRATIONS_RUN=false: /readyz answers 503 ` +
    `until ${pending === 1 ? 'it is' : 'they are'} applied (\`npm run migration:run\`, or the migration job)`
  );
}
