import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config.schema.js';
import { dataSourceOptions } from './data-source-options.js';
import { DatabaseTarget, openDatabaseTarget } from './database-target.js';

/** A data source that lets go of its database when destroyed: an embedded engine it started stops. */
export class TargetDataSource extends DataSource {
  constructor(
    config: AppConfig,
    readonly target: DatabaseTarget,
  ) {
    // Two connections: the migration runner holds its advisory lock on one and migrates on the other.
    super(dataSourceOptions(config, target, { serving: false, poolSize: 2 }));
  }

  override async destroy(): Promise<void> {
    try {
      if (this.isInitialized) await super.destroy();
    } finally {
      await this.target.close();
    }
  }
}

/**
 * The data source of the migration scripts and of `ormconfig.ts` (the TypeORM CLI): the configured
 * database, DATABASE_URL or the embedded one in DATA_DIR. A running server that has the embedded
 * database open shares it through its socket; otherwise this process opens the directory itself.
 */
export async function openMigrationDataSource(config: AppConfig): Promise<TargetDataSource> {
  return new TargetDataSource(config, await openDatabaseTarget(config, { shareRunning: true }));
}
