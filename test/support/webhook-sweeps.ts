import { DataSource } from 'typeorm';
import { WEBHOOK_FAN_OUT } from '../../src/events/webhook-outbox.js';
import { WEBHOOK_ATTEMPT, WEBHOOK_NOTICES } from '../../src/webhooks/webhook-jobs.js';
import { WebhookSweeper } from '../../src/webhooks/webhook-sweeper.js';
import { queuesSettled } from './job-queue.js';
import type { TestApp } from './test-app.js';

/** The queues of deliveries: the events domain's fan-out, the attempts, and the mail about an endpoint disabled for failing. */
const WEBHOOK_QUEUES = [WEBHOOK_FAN_OUT, WEBHOOK_ATTEMPT, WEBHOOK_NOTICES].map((kind) => kind.queue);

/**
 * Until nothing more follows, by the clock as it is now, from what happened so far: the webhook jobs due
 * by now have run, then the sweeper has made one whole look for due deliveries that began after this
 * call, and the attempts it queued have run too. In place of sleeping until "the sweeper has looked":
 * after it, a receiver that got nothing more will get nothing more until the clock moves.
 *
 * The sweeper's `tick()` is what its interval calls; while a look runs, it answers that look instead of
 * starting another, and that look may have read the clock before the caller moved it: so a second tick,
 * whose look began after the first one's ended. A sweeper that was stopped looks no more.
 */
export async function webhooksSettled(t: TestApp): Promise<void> {
  const db = t.get(DataSource);
  const sweeper = t.get(WebhookSweeper);
  await queuesSettled(db, WEBHOOK_QUEUES);
  await sweeper.tick();
  await sweeper.tick();
  await queuesSettled(db, WEBHOOK_QUEUES);
}
