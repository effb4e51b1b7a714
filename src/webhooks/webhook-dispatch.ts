import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { JobQueue } from '../jobs/job-queue.js';
import { stuckQueuedAfterMs, WEBHOOK_ATTEMPT } from './webhook-jobs.js';
import { TEST_EVENT_TYPE, testBody } from './webhook-payloads.js';
import type { WebhookDeliveryState } from './webhook-states.js';

/**
 * The deliveries people ask for (the endpoint's managers, through WebhookEndpointsService, which checks
 * who may and throttles): a test event, and one more attempt of a delivery. Each is queued in one
 * transaction with its attempt job, and runs like any attempt (WebhookAttempts), whatever the
 * endpoint's state. Deliveries of domain events come from the events domain's outbox (WebhookFanOutHandler).
 */
@Injectable()
export class WebhookDispatch {
  private readonly stuckAfterMs: number;

  constructor(
    private readonly jobs: JobQueue,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.stuckAfterMs = stuckQueuedAfterMs(config.jobs);
  }

  /** Creates a `webhook.test` message and its delivery to this endpoint, queued now; returns the delivery's id. */
  sendTest(endpointId: string): Promise<string> {
    return this.dataSource.transaction(async (tx) => {
      const now = this.clock.now();
      const [messageId, deliveryId] = [randomUUID(), randomUUID()];
      await tx.query(`INSERT INTO webhook_messages (id, event_type, body, created_at) VALUES ($1, $2, $3, $4)`, [
        messageId,
        TEST_EVENT_TYPE,
        testBody(endpointId, now),
        now,
      ]);
      await tx.query(
        `INSERT INTO webhook_deliveries (id, message_id, endpoint_id, state, attempts, created_at, queued_at)
         VALUES ($1, $2, $3, 'queued', 0, $4, now())`,
        [deliveryId, messageId, endpointId, now],
      );
      await this.jobs.enqueue(WEBHOOK_ATTEMPT, { deliveryId, number: 1, trigger: 'test' }, { tx });
      return deliveryId;
    });
  }

  /**
   * One more attempt of this delivery (trigger 'redelivery', the same `webhook-id`), queued now. The
   * retry schedule is not restarted: a delivery waiting for its next automatic attempt keeps that time
   * if the redelivery fails. A delivery with an attempt already queued is left to that attempt, unless it
   * has been queued longer than that attempt's job can live (stuckQueuedAfterMs): then this one takes over.
   */
  redeliver(deliveryId: string): Promise<void> {
    return this.dataSource.transaction(async (tx) => {
      const [delivery] = (await tx.query(
        `SELECT state, attempts, next_attempt_at, state = 'queued' AND queued_at <= now() - $2 * interval '1 millisecond' AS stuck
           FROM webhook_deliveries WHERE id = $1 FOR UPDATE`,
        [deliveryId, this.stuckAfterMs],
      )) as { state: WebhookDeliveryState; attempts: number; next_attempt_at: Date | string | null; stuck: boolean | null }[];
      if (!delivery || (delivery.state === 'queued' && !delivery.stuck)) return;
      const resumeAt =
        delivery.state === 'scheduled' && delivery.next_attempt_at ? new Date(delivery.next_attempt_at).toISOString() : undefined;
      await tx.query(`UPDATE webhook_deliveries SET state = 'queued', queued_at = now() WHERE id = $1`, [deliveryId]);
      await this.jobs.enqueue(
        WEBHOOK_ATTEMPT,
        { deliveryId, number: delivery.attempts + 1, trigger: 'redelivery', ...(resumeAt && { resumeAt }) },
        { tx },
      );
    });
  }
}
