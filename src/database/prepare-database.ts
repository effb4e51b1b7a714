import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config.schema.js';
import { dataSourceOptions } from './data-source-options.js';
import { DatabaseTarget } from './database-target.js';
import { runMigrations } from './migrate.js';

export class DatabaseUnavailableError extends Error {
  constructor(target: DatabaseTarget, cause: unknown) {
    super(`Cannot reach the database (${target.description}): ${(cause as Error).message}`);
    this.name = 'DatabaseUnavailableError';
  }
}

/** Connects once to check the database answers, and applies pending migrations when asked to. */
export async function prepareDatabase(config: AppConfig, target: DatabaseTarget, options: { migrate: boolean }): Promise<string[]> {
  const dataSource = new DataSource(dataSourceOptions(config, target, { serving: false, poolSize: 2 }));
  try {
    await dataSource.initialize();
  } catch (err) {
    throw new DatabaseUnavailableError(target, err);
  }
  try {
    if (!options.migrate) return [];
    const applied = await runMigrations(dataSource);
    return applied.map((m) => m.name);
  } finally {
    await dataSource.destroy();
  }
}
