import type { QueueGaugeState } from '../metrics/metrics.js';
import { JOB_SCHEMA } from '../database/migrations/1796200000002-job-queue.js';

/** One queue as operators watch it (/metrics, `jobs:list`): the metrics' own shape of it. */
export type QueueState = QueueGaugeState;

type Query = (text: string, values: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

/** Every queue of the database (whichever process declared it), pg-boss's internal ones aside. */
export async function readQueueStates(query: Query): Promise<QueueState[]> {
  const { rows } = await query(
    `SELECT q.name,
            count(j.id) FILTER (WHERE j.state IN ('created', 'retry') AND j.start_after <= now()) AS waiting,
            count(j.id) FILTER (WHERE j.state IN ('created', 'retry') AND j.start_after > now()) AS scheduled,
            count(j.id) FILTER (WHERE j.state = 'active') AS active,
            count(j.id) FILTER (WHERE j.state = 'failed') AS failed,
            coalesce(extract(epoch FROM now() - min(j.start_after) FILTER (WHERE j.state IN ('created', 'retry') AND j.start_after <= now())), 0) AS oldest
       FROM ${JOB_SCHEMA}.queue q LEFT JOIN ${JOB_SCHEMA}.job j ON j.name = q.name AND j.state IN ('created', 'retry', 'active', 'failed')
      WHERE q.name NOT LIKE '\\_\\_pgboss\\_\\_%'
      GROUP BY q.name ORDER BY q.name`,
    [],
  );
  return rows.map((row) => ({
    queue: row.name as string,
    waiting: Number(row.waiting),
    scheduled: Number(row.scheduled),
    active: Number(row.active),
    failed: Number(row.failed),
    oldestWaitingSeconds: Math.max(0, Number(row.oldest)),
  }));
}
