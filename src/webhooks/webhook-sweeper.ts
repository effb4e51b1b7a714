import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { EntityTable } from '../database/entity-table.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { JobQueue } from '../jobs/job-queue.js';
import { JOBS_WORK } from '../jobs/jobs.tokens.js';
import { attemptJobId, requeuedAttemptJobId, stuckQueuedAfterMs, WEBHOOK_ATTEMPT } from './webhook-jobs.js';
import { TEST_EVENT_TYPE } from './webhook-payloads.js';
import { WebhookDeliveryEntity } from './webhook-delivery.entity.js';
import { WebhookMessageEntity } from './webhook-message.entity.js';

const SWEEP_INTERVAL_MS = 1000;
/** How often a process looks for deliveries whose attempt job was lost. */
const STUCK_CHECK_INTERVAL_MS = 60_000;
/** Deliveries moved per transaction; a backlog takes several ticks, none of them long. */
const SWEEP_BATCH = 100;
const MAX_BATCHES_PER_TICK = 10;

/**
 * Moves the deliveries whose next automatic attempt is due (by the injected Clock) from `scheduled` to
 * `queued`, and enqueues that attempt, in one transaction: FOR UPDATE SKIP LOCKED, so instances
 * sweeping at once share the due rows and never queue one twice; the attempt's job id derives from the
 * delivery and the attempt's number as well. Deliveries of paused and disabled endpoints are left alone
 * (a paused endpoint's wait until it resumes). Every second, in the server's processes (JOBS_WORK).
 *
 * It also queues again the deliveries `queued` for longer than their attempt job can live
 * (stuckQueuedAfterMs: the job used up its retries), under a job id derived from when they were queued.
 */
@Injectable()
export class WebhookSweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<unknown>;
  private outage = false;
  private stopped = false;

  constructor(
    private readonly jobs: JobQueue,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    @Inject(JOBS_WORK) private readonly work: boolean,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'jobs'>,
  ) {
    this.stuckAfterMs = stuckQueuedAfterMs(config.jobs);
    this.delivery = EntityTable.of(dataSource, WebhookDeliveryEntity, 'd').pick('id', 'attempts');
    this.message = EntityTable.of(dataSource, WebhookMessageEntity, 'm').pick('eventType');
  }

  private readonly stuckAfterMs: number;
  /** What the sweeper reads of a delivery it queues (its next attempt's number), and of the message of one it queues again. */
  private readonly delivery: EntityTable<Pick<WebhookDeliveryEntity, 'id' | 'attempts'>, WebhookDeliveryEntity>;
  private readonly message: EntityTable<Pick<WebhookMessageEntity, 'eventType'>, WebhookMessageEntity>;

  onApplicationBootstrap(): void {
    if (!this.work) return;
    this.timer = setInterval(() => void this.tick(), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  /** Before the jobs and the database stop: no new sweep, and the one running finishes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** One look for due deliveries, unless one is running: never rejects (an outage is logged once, and tried again at the next tick). */
  tick(): Promise<unknown> {
    if (this.stopped) return Promise.resolve();
    if (this.sweeping) return this.sweeping;
    this.sweeping = this.sweepBacklog()
      .then(() => {
        if (this.outage) this.logger.log('Webhook sweeper: the database answers again');
        this.outage = false;
      })
      .catch((err: unknown) => {
        // A database outage: said once, tried again at the next tick.
        if (!this.outage) this.logger.warn(`Webhook sweeper could not sweep: ${err instanceof Error ? err.message : String(err)}`);
        this.outage = true;
      })
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /**
   * Batches until fewer than a full one were due (at most MAX_BATCHES_PER_TICK: a backlog goes at that
   * pace, between other work). An idle service pays one indexed read a second (no transaction), and the
   * look for lost attempt jobs once a minute (they are lost for 15 minutes at least before it counts).
   */
  private async sweepBacklog(): Promise<void> {
    if (await this.anyDue()) {
      for (let batch = 0; batch < MAX_BATCHES_PER_TICK && !this.stopped; batch++) if ((await this.sweep()) < SWEEP_BATCH) break;
    }
    const now = this.clock.now().getTime();
    if (this.stopped || now - this.stuckCheckedAt < STUCK_CHECK_INTERVAL_MS) return;
    this.stuckCheckedAt = now;
    await this.requeueStuck();
  }

  /** Clock time of the last look for lost attempt jobs. */
  private stuckCheckedAt = 0;

  /** Whether a delivery of an active endpoint is due (the partial index on scheduled deliveries answers it). */
  private async anyDue(): Promise<boolean> {
    const [{ due }] = (await this.dataSource.query(
      `SELECT EXISTS (SELECT 1 FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.state = 'active'
                       WHERE d.state = 'scheduled' AND d.next_attempt_at <= $1) AS due`,
      [this.clock.now()],
    )) as [{ due: boolean }];
    return due;
  }

  /** Queues the due deliveries (up to SWEEP_BATCH); returns how many. */
  async sweep(): Promise<number> {
    return this.dataSource.transaction(async (tx) => {
      const due = (
        (await tx.query(
          `SELECT ${this.delivery.select} FROM webhook_deliveries d
             JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.state = 'active'
            WHERE d.state = 'scheduled' AND d.next_attempt_at <= $1
            ORDER BY d.next_attempt_at
            LIMIT ${SWEEP_BATCH}
            FOR UPDATE OF d SKIP LOCKED`,
          [this.clock.now()],
        )) as Record<string, unknown>[]
      ).map(this.delivery.map);
      if (due.length === 0) return 0;
      await tx.query(`UPDATE webhook_deliveries SET state = 'queued', queued_at = now() WHERE id = ANY ($1::uuid[])`, [
        due.map((d) => d.id),
      ]);
      for (const { id, attempts } of due) {
        const number = attempts + 1;
        await this.jobs.enqueue(WEBHOOK_ATTEMPT, { deliveryId: id, number, trigger: 'automatic' }, { tx, id: attemptJobId(id, number) });
      }
      return due.length;
    });
  }

  /**
   * Queues again (up to SWEEP_BATCH) the deliveries whose attempt job was lost: `queued` (wall time, as
   * job expiry is) for longer than such a job can live. A test message gets a test attempt (no retries),
   * anything else an automatic one. Returns how many.
   */
  async requeueStuck(): Promise<number> {
    return this.dataSource.transaction(async (tx) => {
      const stuck = (
        (await tx.query(
          `SELECT ${this.delivery.select}, ${this.message.select} FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id
            WHERE d.state = 'queued' AND d.queued_at <= now() - $1 * interval '1 millisecond'
            ORDER BY d.queued_at
            LIMIT ${SWEEP_BATCH}
            FOR UPDATE OF d SKIP LOCKED`,
          [this.stuckAfterMs],
        )) as Record<string, unknown>[]
      ).map((row) => ({ ...this.delivery.map(row), ...this.message.map(row) }));
      if (stuck.length === 0) return 0;
      const [{ queued_at: queuedAt }] = (await tx.query(
        `WITH requeued AS (UPDATE webhook_deliveries SET queued_at = now() WHERE id = ANY ($1::uuid[]) RETURNING queued_at)
         SELECT queued_at FROM requeued LIMIT 1`,
        [stuck.map((d) => d.id)],
      )) as [{ queued_at: Date }];
      for (const { id, attempts, eventType } of stuck) {
        const number = attempts + 1;
        const trigger = eventType === TEST_EVENT_TYPE ? 'test' : 'automatic';
        await this.jobs.enqueue(
          WEBHOOK_ATTEMPT,
          { deliveryId: id, number, trigger },
          { tx, id: requeuedAttemptJobId(id, number, queuedAt) },
        );
      }
      this.logger.warn(`Webhook sweeper: ${stuck.length} deliveries queued again, their attempt jobs lost`);
      return stuck.length;
    });
  }
}
