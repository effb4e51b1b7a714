import type PgBoss from 'pg-boss';
import type pg from 'pg';
import type { EntityManager } from 'typeorm';
import { preparedName } from '../database/prepared-statements.js';
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
 *
 * `named`: the statement runs as a named prepared statement on the transaction's connection (the
 * serving pool on a PostgreSQL server that gives each connection its own session, as for
 * PreparedStatements): pg-boss's insert takes about half a millisecond to plan, paid on every
 * registration while it holds its event's row lock; prepared, each connection plans it once.
 */
export function transactionDatabase(tx: EntityManager, named = false): PgBoss.Db {
  const runner = tx.queryRunner;
  if (!runner?.isTransactionActive) throw new Error('JobQueue.enqueue: `tx` must be the EntityManager of an open transaction');
  return {
    executeSql: async (text, values) => {
      if (!named || values.length === 0) {
        return { rows: ((await runner.query(text, values, true)) as { records: unknown[] }).records };
      }
      tx.connection.logger.logQuery(text, values);
      const client = (await runner.connect()) as pg.PoolClient;
      return client.query({ name: preparedName(text), text, values });
    },
  };
}
