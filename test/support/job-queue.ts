import type { DataSource } from 'typeorm';
import { eventually } from './eventually.js';

/**
 * Resolves once no job of these queues waits or runs (pg-boss's states `created`, `retry`, `active`): every
 * job queued by now has finished, so "nothing more arrived" means nothing more was sent. A mail job
 * completes only after the SMTP server accepted the message, and the test SMTP server records a message
 * before it accepts it, so no grace period is needed after this.
 */
export async function queuesSettled(db: DataSource, queues: string[], limitMs = 20_000): Promise<void> {
  await eventually(async () => {
    const [{ waiting }] = (await db.query(
      `SELECT count(*)::int AS waiting FROM pgboss.job WHERE name = ANY($1) AND state IN ('created', 'retry', 'active')`,
      [queues],
    )) as [{ waiting: number }];
    if (waiting > 0) throw new Error(`${waiting} jobs of ${queues.join(', ')} still queued or running`);
  }, limitMs);
}
