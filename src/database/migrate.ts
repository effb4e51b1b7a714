import { DataSource, Migration } from 'typeorm';
import { DatabaseSettingError } from './pooling-check.js';

// Any constant works; it only has to be the same for every instance of this service.
const MIGRATION_LOCK_KEY = 727_274_001;

/**
 * Runs pending migrations under a PostgreSQL advisory lock, so several instances starting at once
 * against one server apply each migration exactly once.
 *
 * The lock is a session's, held on a connection of its own while the migrations run on another; it
 * ends with `pg_advisory_unlock`, or with that connection. Migrations therefore run on the session
 * connection (DATABASE_DIRECT_URL when set): through a pooler in transaction mode the lock would be
 * taken on one server session and released on another, and stay held for as long as the pooler keeps
 * the first. The start-up check refuses such a pooler; should one go unnoticed, the lock is checked to
 * be this session's before anything is migrated, and this stops with one line instead.
 */
export async function runMigrations(dataSource: DataSource): Promise<Migration[]> {
  const lock = dataSource.createQueryRunner();
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    // The next statement on this connection must be on the session that holds the lock.
    const [{ held }] = (await lock.query(
      `SELECT count(*)::int AS held FROM pg_locks
        WHERE locktype = 'advisory' AND classid = 0 AND objid = $1 AND objsubid = 1 AND granted AND pid = pg_backend_pid()`,
      [MIGRATION_LOCK_KEY],
    )) as { held: number }[];
    if (held !== 1) {
      throw new DatabaseSettingError(
        'The migration lock is not held by the session that took it: the database connection for migrations goes through a pooler ' +
          'in transaction mode. Set DATABASE_DIRECT_URL to a direct or session-mode connection (docs/deploy.md)',
      );
    }
    try {
      return await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    }
  } finally {
    await lock.release();
  }
}
