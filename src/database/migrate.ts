import { DataSource, Migration } from 'typeorm';
import type { DatabaseTarget } from './database-target.js';

// Any constant works; it only has to be the same for every instance of this service.
const MIGRATION_LOCK_KEY = 727_274_001;

/**
 * Runs pending migrations under a PostgreSQL advisory lock, so several instances starting at once
 * against one server apply each migration exactly once.
 *
 * On a PostgreSQL server the lock is a transaction's (`pg_advisory_xact_lock`), held by a transaction
 * kept open on a connection of its own while the migrations run on another: a pooler, even in
 * transaction mode, keeps an open transaction on one server session, and its end (commit, or the
 * connection lost) always releases the lock. A session lock taken through a transaction pooler would
 * be taken on one server session and "released" on another, and stay held for as long as the pooler
 * keeps the first. The lock transaction waits and idles as long as the migrations take: no statement or
 * idle-in-transaction timeout applies to it (`SET LOCAL`, which ends with it).
 *
 * The embedded database serves every connection from one session, where a transaction opened on one
 * connection would take in the migrations' own: there the lock is the session's.
 */
export async function runMigrations(dataSource: DataSource, kind: DatabaseTarget['kind']): Promise<Migration[]> {
  const lock = dataSource.createQueryRunner();
  await lock.connect();
  try {
    if (kind === 'embedded') {
      await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      try {
        return await dataSource.runMigrations({ transaction: 'each' });
      } finally {
        await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
      }
    }
    await lock.query('BEGIN');
    try {
      await lock.query('SET LOCAL statement_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0');
      await lock.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      return await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await lock.query('COMMIT').catch(() => undefined);
    }
  } finally {
    await lock.release();
  }
}
