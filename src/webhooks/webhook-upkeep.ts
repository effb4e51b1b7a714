import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { purgeInBatches } from '../database/batched-purge.js';
import { Metrics, type WebhookGaugeState } from '../metrics/metrics.js';
import { stuckQueuedAfterMs } from './webhook-jobs.js';

/** How long the delivery log keeps a message, its deliveries and their attempts. */
export const WEBHOOK_RETENTION_MS = 30 * 24 * 3600_000;

/** What operators see of webhooks (the gauges in /metrics) and what housekeeping deletes (messages after 30 days). */
@Injectable()
export class WebhookUpkeep {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.stuckAfterMs = stuckQueuedAfterMs(config.jobs);
    metrics.webhooks(() => this.gauges());
  }

  private readonly stuckAfterMs: number;

  /** Deletes the messages older than WEBHOOK_RETENTION_MS (their deliveries and attempts go with them); returns how many. */
  async purgeOld(): Promise<number> {
    const before = new Date(this.clock.now().getTime() - WEBHOOK_RETENTION_MS);
    // Small batches: each message's deliveries (one per endpoint) and their attempts (up to nine and the redeliveries) go with it.
    return purgeInBatches((text, values) => this.dataSource.query(text, values), 'webhook_messages', 't.created_at < $1', [before], 200);
  }

  async gauges(): Promise<WebhookGaugeState> {
    const [endpoints, due] = (await Promise.all([
      this.dataSource.query(`SELECT state, count(*)::int AS count FROM webhook_endpoints GROUP BY state`),
      // A paused endpoint's deliveries wait for it to resume: not due.
      this.dataSource.query(
        `SELECT (SELECT count(*)::int FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.state = 'active'
                  WHERE d.state = 'scheduled' AND d.next_attempt_at <= $1) AS due,
                (SELECT count(*)::int FROM webhook_deliveries
                  WHERE state = 'queued' AND queued_at <= now() - $2 * interval '1 millisecond') AS stuck`,
        [this.clock.now(), this.stuckAfterMs],
      ),
    ])) as [{ state: 'active' | 'paused' | 'disabled'; count: number }[], { due: number; stuck: number }[]];
    const state: WebhookGaugeState = {
      endpoints: { active: 0, paused: 0, disabled: 0 },
      due: due[0]?.due ?? 0,
      stuck: due[0]?.stuck ?? 0,
    };
    for (const row of endpoints) state.endpoints[row.state] = row.count;
    return state;
  }
}
