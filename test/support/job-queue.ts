import type { DataSource } from 'typeorm';
import { ACCOUNT_MAIL } from '../../src/account-links/account-mail.job.js';
import { EVENT_NOTICES, REGISTRATION_NOTICES } from '../../src/events/event-notices.js';
import { SECURITY_NOTICES } from '../../src/security-notices/security-notices.js';
import { WEBHOOK_NOTICES } from '../../src/webhooks/webhook-jobs.js';
import { eventually } from './eventually.js';

/** Every queue whose jobs send mail (an event-wide notice's job writes the per-registration ones). */
export const MAIL_QUEUES = [ACCOUNT_MAIL, SECURITY_NOTICES, REGISTRATION_NOTICES, EVENT_NOTICES, WEBHOOK_NOTICES].map((kind) => kind.queue);

/**
 * Resolves once no job of these queues is due or runs (pg-boss's states `retry` and `active`, and `created`
 * once its `start_after` has come): every job queued by now to run now has finished, so "nothing more
 * arrived" means nothing more was sent. A job planned for later (a reminder the day before an event) does
 * not hold it up; a failed attempt waiting for its retry does. The queues are read in one statement, so a
 * job that a job of another of them queues before it completes is seen. A mail job completes only after
 * the SMTP server accepted the message, and the test SMTP server records a message before it accepts it,
 * so no grace period is needed after this.
 */
export async function queuesSettled(db: DataSource, queues: string[], limitMs = 20_000): Promise<void> {
  await eventually(async () => {
    const [{ waiting }] = (await db.query(
      `SELECT count(*)::int AS waiting FROM pgboss.job
        WHERE name = ANY($1) AND (state IN ('retry', 'active') OR (state = 'created' AND start_after <= now()))`,
      [queues],
    )) as [{ waiting: number }];
    if (waiting > 0) throw new Error(`${waiting} jobs of ${queues.join(', ')} still due or running`);
  }, limitMs);
}
