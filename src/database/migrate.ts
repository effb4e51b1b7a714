import { DataSource, Migration } from 'typeorm';

// Any constant works; it only has to be the same for every instance of this service.
const MIGRATION_LOCK_KEY = 727_274_001;

/**
 * Runs pending migrations under a PostgreSQL advisory lock, so several instances starting at once
 * against one server apply each migration exactly once.
 */
export async function runMigrations(dataSource: DataSource): Promise<Migration[]> {
  const lock = dataSource.createQueryRunner();
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    return await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lock.release();
  }
}
