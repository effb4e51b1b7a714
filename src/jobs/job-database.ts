import { createRequire } from 'node:module';
import type PgBoss from 'pg-boss';
import type { EntityManager } from 'typeorm';
import type { OwnedPool } from '../database/owned-pool.js';

/**
 * pg-boss's statements go through the service's own pool (DATABASE_POOL_SIZE, one budget per process;
 * the one connection of the embedded database, where PGlite serves every socket client from one
 * session). Behind a pooler in transaction mode they run unnamed, which is what pg's `pool.query` does.
 */
export function poolDatabase(owned: OwnedPool, schema: string, onOutcomeLost: (err: unknown) => void): PgBoss.Db {
  const outcomes = outcomeStatements(schema);
  return {
    executeSql: async (text, values) => {
      try {
        return await owned.pool.query(text, values);
      } catch (err) {
        if (!outcomes.has(text)) throw err;
        // pg-boss records a batch's outcome without awaiting it (pg-boss 10): a rejection there would end
        // the process (an unhandled rejection) whenever the database is unreachable at that moment. The
        // attempt stays active instead, and is taken as dead after its kind's expiry and retried.
        onOutcomeLost(err);
        return { rows: [{ count: 0 }] };
      }
    },
  };
}

/** pg-boss's statements that mark jobs completed or failed by id (its own plans, so the text is exact). */
function outcomeStatements(schema: string): Set<string> {
  const plans = createRequire(import.meta.url)('pg-boss/src/plans.js') as {
    completeJobs(schema: string): string;
    failJobsById(schema: string): string;
  };
  return new Set([plans.completeJobs(schema), plans.failJobsById(schema)]);
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
