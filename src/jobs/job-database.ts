import type PgBoss from 'pg-boss';
import type { EntityManager } from 'typeorm';
import type { OwnedPool } from '../database/owned-pool.js';

/**
 * pg-boss's statements go through the service's own pool (DATABASE_POOL_SIZE, one budget per process;
 * the one connection of the embedded database, where PGlite serves every socket client from one
 * session). Behind a pooler in transaction mode they run unnamed, which is what pg's `pool.query` does.
 */
export function poolDatabase(owned: OwnedPool): PgBoss.Db {
  return { executeSql: (text, values) => owned.pool.query(text, values) };
}

/**
 * The transaction of a business change: a job enqueued here is written, or rolled back, with the
 * change (a transactional outbox). Logged as the transaction's other statements are.
 */
export function transactionDatabase(tx: EntityManager): PgBoss.Db {
  const runner = tx.queryRunner;
  if (!runner?.isTransactionActive) throw new Error('JobQueue.enqueue: `tx` must be the EntityManager of an open transaction');
  return {
    executeSql: async (text, values) => ({ rows: ((await runner.query(text, values, true)) as { records: unknown[] }).records }),
  };
}
