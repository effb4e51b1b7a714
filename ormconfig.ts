import 'reflect-metadata';
import { loadConfig } from './src/config/config.schema.js';
import { readEnvironment } from './src/config/environment.js';
import { openMigrationDataSource } from './src/database/migration-data-source.js';

/**
 * The TypeORM data source for the TypeORM CLI, built once `npm run build` has compiled it:
 * `npx typeorm migration:show -d dist/ormconfig.js`. Same configuration, entities and migrations as the
 * service and as `npm run migration:run` / `migration:revert` / `migration:generate`, which open it
 * through the same function. Never synchronizes: the schema changes through migrations only.
 */
export default await openMigrationDataSource(loadConfig(readEnvironment()));
