import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import type { DomainEvent } from '../events/domain-events.js';
import { WEBHOOK_FAN_OUT, type WebhookFanOut } from '../events/webhook-outbox.js';
import { derivedJobId } from '../jobs/job-id.js';
import type { JobContext } from '../jobs/job-kind.js';
import { JobQueue } from '../jobs/job-queue.js';
import { applicationConcernedSql } from './webhook-audience.js';
import { attemptJobId, WEBHOOK_ATTEMPT } from './webhook-jobs.js';
import { eventBody } from './webhook-payloads.js';

/**
 * The active endpoints that hear of one domain event (docs/webhooks.md, "Who receives what"): an
 * organizer's endpoints, for that organizer's events; an application's, when its grants cover the event
 * (applicationConcernedSql, checked again at each attempt). Paused and disabled endpoints get no new
 * deliveries. $1 type, $2 organizer, $3 event, $4 registrant, $5 the Clock's time.
 */
const SUBSCRIBED_ENDPOINTS = `
  SELECT e.id FROM webhook_endpoints e
   WHERE e.state = 'active' AND $1::text = ANY (e.event_types)
     AND (e.organizer_id = $2
          OR (e.application_id IS NOT NULL AND ${applicationConcernedSql({
            application: 'e.application_id',
            type: '$1::text',
            organizer: '$2::uuid',
            event: '$3::uuid',
            user: '$4::uuid',
            now: '$5::timestamptz',
          })}))
   ORDER BY e.id`;

/**
 * Handles the events domain's outbox (WEBHOOK_FAN_OUT): for each domain event, its message (the exact
 * body every endpoint receives) and one delivery per subscribed endpoint, queued with its first attempt,
 * all in one transaction. Ids derive from the job's id, so a fan-out run again adds nothing.
 */
@Injectable()
export class WebhookFanOutHandler implements OnModuleInit {
  constructor(
    private readonly jobs: JobQueue,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    jobs.declare(WEBHOOK_ATTEMPT);
  }

  onModuleInit(): void {
    this.jobs.handle(WEBHOOK_FAN_OUT, async (data, job) => {
      await this.fanOut(data, job);
    });
  }

  async fanOut(data: WebhookFanOut, job: JobContext): Promise<{ deliveries: number }> {
    let deliveries = 0;
    await this.dataSource.transaction(async (tx) => {
      for (const [index, event] of data.events.entries())
        deliveries += await this.deliver(tx, event, derivedJobId(job.id, 'message', String(index)));
    });
    return { deliveries };
  }

  private async deliver(tx: EntityManager, event: DomainEvent, messageId: string): Promise<number> {
    const now = this.clock.now();
    const endpoints = (await tx.query(SUBSCRIBED_ENDPOINTS, [event.type, event.organizerId, event.eventId, event.userId ?? null, now])) as {
      id: string;
    }[];
    if (endpoints.length === 0) return 0;
    await tx.query(
      `INSERT INTO webhook_messages (id, event_type, body, created_at, organizer_id, event_id, user_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
      [messageId, event.type, eventBody(event, this.config.baseUrl), now, event.organizerId, event.eventId, event.userId ?? null],
    );
    const created = (await tx.query(
      `INSERT INTO webhook_deliveries (id, message_id, endpoint_id, state, attempts, created_at, queued_at)
       SELECT d.id, $1, d.endpoint_id, 'queued', 0, $4, now() FROM unnest($2::uuid[], $3::uuid[]) AS d (id, endpoint_id)
       ON CONFLICT (message_id, endpoint_id) DO NOTHING
       RETURNING id`,
      [messageId, endpoints.map((e) => derivedJobId(messageId, e.id)), endpoints.map((e) => e.id), now],
    )) as { id: string }[];
    for (const { id } of created) {
      await this.jobs.enqueue(WEBHOOK_ATTEMPT, { deliveryId: id, number: 1, trigger: 'automatic' }, { tx, id: attemptJobId(id, 1) });
    }
    return created.length;
  }
}
