import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { JobInsertion } from '../jobs/job-insertion.js';
import { jobKind } from '../jobs/job-kind.js';
import { JobQueue } from '../jobs/job-queue.js';
import type { DomainEvent } from './domain-events.js';

/** What one change of the events domain tells webhooks: every domain event of that transaction. */
export interface WebhookFanOut {
  events: DomainEvent[];
}

/**
 * The fan-out job: finds the endpoints subscribed to each event and creates their deliveries
 * (src/webhooks/). One job per transaction, however many events it carries.
 */
export const WEBHOOK_FAN_OUT = jobKind<WebhookFanOut>('webhook-fan-out', {
  expireInSeconds: 120,
  label: () => 'webhook.fan-out',
});

/**
 * The events domain's side of webhooks (a transactional outbox, like EventNotices): written in the
 * transaction of the change, so a change that rolls back sends nothing and one that commits is
 * delivered even if the process dies right after.
 */
@Injectable()
export class WebhookOutbox {
  constructor(private readonly jobs: JobQueue) {
    jobs.declare(WEBHOOK_FAN_OUT);
  }

  /**
   * The fan-out job's insert as part of a statement of the caller's (`JobQueue.insertion`), its data
   * (a WebhookFanOut) given by the SQL expression `fanOut`.
   */
  insertion(firstParameter: number, fanOut: string): Promise<JobInsertion> {
    return this.jobs.insertion(WEBHOOK_FAN_OUT, firstParameter, fanOut);
  }

  async emit(tx: EntityManager, events: DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.jobs.enqueue(WEBHOOK_FAN_OUT, { events }, { tx });
  }
}
