import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { randomUUID } from 'node:crypto';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { EntityTable } from '../database/entity-table.js';
import { derivedJobId } from '../jobs/job-id.js';
import { JobQueue } from '../jobs/job-queue.js';
import { Metrics } from '../metrics/metrics.js';
import { OrganizersService } from '../events/organizers.service.js';
import { ApplicationsService } from '../oauth/clients/applications.service.js';
import { UsersService } from '../users/users.service.js';
import { postWebhook, type TargetPolicy, type WebhookResponse } from '../outbound/outbound.js';
import { signedHeaders } from './signed-headers.js';
import { WEBHOOK_ATTEMPT, WEBHOOK_NOTICES, type WebhookAttemptJob } from './webhook-jobs.js';
import { WebhookAttemptEntity } from './webhook-attempt.entity.js';
import { applicationConcernedSql } from './webhook-audience.js';
import { WebhookDeliveryEntity } from './webhook-delivery.entity.js';
import { WebhookEndpointEntity } from './webhook-endpoint.entity.js';
import { WebhookMessageEntity } from './webhook-message.entity.js';
import { failingTooLong, failureStreakSince, retryDelayMs } from './webhook-schedule.js';
import { unsealWebhookSecret } from './webhook-secrets.js';
import type { WebhookDeliveryState, WebhookEndpointState } from './webhook-states.js';

/** What one attempt needs: the delivery's state, its message and its endpoint. */
interface AttemptTarget {
  state: WebhookDeliveryState;
  attempts: number;
  messageId: string;
  body: string;
  endpointId: string;
  url: string;
  endpointState: WebhookEndpointState;
  applicationId: string | null;
  /** What the message is about (null for test messages and messages older than these columns). */
  about: { type: string; organizerId: string; eventId: string; userId: string | null } | null;
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
}

/** The delivery is waiting for exactly this attempt (not one recorded already, nor one superseded). */
function awaits(delivery: { state: WebhookDeliveryState; attempts: number }, job: WebhookAttemptJob): boolean {
  return delivery.state === 'queued' && delivery.attempts === job.number - 1;
}

/**
 * Runs one attempt of one delivery (WEBHOOK_ATTEMPT jobs): signs the message with the endpoint's
 * secret (and the previous one during a rotation), POSTs it through the SSRF-safe client, and records
 * the attempt with what follows from it, in one transaction under the delivery's row lock:
 * - 2xx: the delivery succeeded, and the endpoint is no longer failing;
 * - anything else: the next automatic attempt is scheduled (RETRY_DELAYS_MS, Clock time) or the delivery
 *   failed; an endpoint failing for 72 hours is disabled, its scheduled deliveries fail, its managers are
 *   told by mail.
 * The job does nothing unless the delivery awaits this attempt's number, so a job run twice (its
 * completion lost) records once. A process killed during the POST leaves the attempt unrecorded: the
 * job expires and posts again (at least once; receivers deduplicate by `webhook-id`).
 *
 * Before posting: an automatic attempt to a paused endpoint puts the delivery back to `scheduled` (it
 * carries on when the endpoint resumes; the sweeper leaves it alone meanwhile), to a disabled one fails
 * it as the disabling did the others; an attempt (automatic or redelivery) to an application's endpoint
 * whose grants no longer cover the message (revoked, the user suspended, no longer a member) is
 * `skipped`. Recording locks the endpoint (FOR NO KEY UPDATE), then the delivery: the order in which
 * deleting an endpoint locks them.
 */
@Injectable()
export class WebhookAttempts implements OnModuleInit {
  private readonly logger = new Logger('Webhooks');
  private readonly policy: TargetPolicy;
  private readonly userAgent: string;
  /** What an attempt reads of its delivery (`d`), message (`m`) and endpoint (`e`): columns and mappers from the entities. */
  private readonly loaded: {
    delivery: EntityTable<Pick<WebhookDeliveryEntity, 'state' | 'attempts' | 'messageId' | 'endpointId'>, WebhookDeliveryEntity>;
    message: EntityTable<Pick<WebhookMessageEntity, 'body' | 'eventType' | 'organizerId' | 'eventId' | 'userId'>, WebhookMessageEntity>;
    endpoint: EntityTable<
      Pick<WebhookEndpointEntity, 'url' | 'applicationId' | 'secretSealed' | 'previousSecretSealed' | 'previousSecretExpiresAt'>,
      WebhookEndpointEntity
    >;
  };
  private readonly loadSql: string;
  /** The endpoint and the delivery as recording an attempt locks and reads them. */
  private readonly lockedEndpoint: EntityTable<
    Pick<WebhookEndpointEntity, 'state' | 'failingSince' | 'lastFailedAt'>,
    WebhookEndpointEntity
  >;
  private readonly lockEndpointSql: string;
  private readonly lockedDelivery: EntityTable<Pick<WebhookDeliveryEntity, 'state' | 'attempts'>, WebhookDeliveryEntity>;
  private readonly lockDeliverySql: string;
  private readonly insertAttemptSql: string;

  constructor(
    private readonly jobs: JobQueue,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly organizers: OrganizersService,
    private readonly applications: ApplicationsService,
    private readonly users: UsersService,
  ) {
    this.policy = config.webhooks;
    this.userAgent = `Agora-Webhooks/1 (+${config.baseUrl.replace(/\/+$/, '')}/docs)`;
    jobs.declare(WEBHOOK_NOTICES);
    const deliveries = EntityTable.of(dataSource, WebhookDeliveryEntity, 'd');
    const messages = EntityTable.of(dataSource, WebhookMessageEntity, 'm');
    const endpoints = EntityTable.of(dataSource, WebhookEndpointEntity, 'e');
    this.loaded = {
      delivery: deliveries.pick('state', 'attempts', 'messageId', 'endpointId'),
      message: messages.pick('body', 'eventType', 'organizerId', 'eventId', 'userId'),
      endpoint: endpoints.pick('url', 'applicationId', 'secretSealed', 'previousSecretSealed', 'previousSecretExpiresAt'),
    };
    // The endpoint's state under its own name: the delivery's is `state`.
    this.loadSql = `SELECT ${this.loaded.delivery.select}, ${this.loaded.message.select}, ${this.loaded.endpoint.select},
              e.${endpoints.column('state')} AS endpoint_state
         FROM ${deliveries.name} d
         JOIN ${messages.name} m ON m.${messages.column('id')} = d.${deliveries.column('messageId')}
         JOIN ${endpoints.name} e ON e.${endpoints.column('id')} = d.${deliveries.column('endpointId')}
        WHERE d.${deliveries.column('id')} = $1`;
    this.lockedEndpoint = endpoints.pick('state', 'failingSince', 'lastFailedAt');
    this.lockEndpointSql = `SELECT ${this.lockedEndpoint.select} FROM ${endpoints.name} e WHERE e.${endpoints.column('id')} = $1 FOR NO KEY UPDATE`;
    this.lockedDelivery = deliveries.pick('state', 'attempts');
    this.lockDeliverySql = `SELECT ${this.lockedDelivery.select} FROM ${deliveries.name} d WHERE d.${deliveries.column('id')} = $1 FOR UPDATE`;
    const attempts = EntityTable.of(dataSource, WebhookAttemptEntity, 'a');
    this.insertAttemptSql = `INSERT INTO ${attempts.name} (${attempts.list(
      'id',
      'deliveryId',
      'number',
      'trigger',
      'startedAt',
      'durationMs',
      'outcome',
      'responseStatus',
      'responseBody',
      'error',
    )}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`;
  }

  onModuleInit(): void {
    this.jobs.handle(WEBHOOK_ATTEMPT, (job) => this.attempt(job));
  }

  async attempt(job: WebhookAttemptJob): Promise<void> {
    const target = await this.load(job.deliveryId);
    if (!target || !awaits(target, job)) return; // deleted with its endpoint, or recorded already
    if (job.trigger === 'automatic' && target.endpointState !== 'active') return this.holdBack(job, target.endpointState);
    if (job.trigger !== 'test' && !(await this.stillConcerned(target))) return this.leave(job, 'skipped', null);
    const startedAt = this.clock.now();
    const headers = this.headers(target);
    // A secret that no longer unseals (SECRET_KEY replaced) fails the attempt in the delivery log, where its managers see why.
    const response =
      typeof headers === 'string'
        ? { outcome: 'failed' as const, status: null, bodyExcerpt: null, error: headers, durationMs: 0 }
        : await postWebhook({ url: target.url, headers, body: target.body }, this.policy);
    const recorded = await this.dataSource.transaction((tx) => this.record(tx, job, target, startedAt, response));
    // Counted once per attempt in the log: a job run twice at once posts twice but records once.
    if (recorded) this.metrics.webhookAttempt(response.outcome, job.trigger, response.durationMs / 1000);
  }

  /** An automatic attempt to an endpoint that is not active: paused, it waits (scheduled, due as before); disabled, it failed. */
  private async holdBack(job: WebhookAttemptJob, endpointState: WebhookEndpointState): Promise<void> {
    if (endpointState === 'paused') await this.leave(job, 'scheduled', this.clock.now());
    else await this.leave(job, 'failed', null);
  }

  /** Leaves `queued` without an attempt, unless another run of the job got there first. */
  private async leave(job: WebhookAttemptJob, state: WebhookDeliveryState, dueAt: Date | null): Promise<void> {
    await this.dataSource.query(
      `UPDATE webhook_deliveries SET state = $3, next_attempt_at = CASE WHEN $3 = 'scheduled' THEN coalesce(next_attempt_at, $4) END
        WHERE id = $1 AND state = 'queued' AND attempts = $2`,
      [job.deliveryId, job.number - 1, state, dueAt],
    );
  }

  /** Whether an application's endpoint may still receive this message (its owner's endpoints always may). */
  private async stillConcerned(target: AttemptTarget): Promise<boolean> {
    if (!target.applicationId || !target.about) return true;
    const [{ concerned }] = (await this.dataSource.query(
      `SELECT ${applicationConcernedSql({
        application: '$1::uuid',
        type: '$2::text',
        organizer: '$3::uuid',
        event: '$4::uuid',
        user: '$5::uuid',
        now: '$6::timestamptz',
      })} AS concerned`,
      [target.applicationId, target.about.type, target.about.organizerId, target.about.eventId, target.about.userId, this.clock.now()],
    )) as [{ concerned: boolean }];
    return concerned;
  }

  private async load(deliveryId: string): Promise<AttemptTarget | undefined> {
    const [row] = (await this.dataSource.query(this.loadSql, [deliveryId])) as { endpoint_state: WebhookEndpointState }[];
    if (!row) return undefined;
    const delivery = this.loaded.delivery.map(row);
    const message = this.loaded.message.map(row);
    const endpoint = this.loaded.endpoint.map(row);
    return {
      state: delivery.state,
      attempts: delivery.attempts,
      messageId: delivery.messageId,
      body: message.body,
      endpointId: delivery.endpointId,
      url: endpoint.url,
      endpointState: row.endpoint_state,
      applicationId: endpoint.applicationId ?? null,
      about: message.organizerId
        ? { type: message.eventType, organizerId: message.organizerId, eventId: message.eventId!, userId: message.userId ?? null }
        : null,
      secretSealed: endpoint.secretSealed,
      previousSecretSealed: endpoint.previousSecretSealed,
      previousSecretExpiresAt: endpoint.previousSecretExpiresAt ? new Date(endpoint.previousSecretExpiresAt) : null,
    };
  }

  /**
   * The Standard Webhooks headers, signed with the current secret and, during a rotation, the previous
   * one. `webhook-timestamp` is the wall clock, not the injected Clock: receivers compare it with theirs.
   * A string instead: why they could not be made.
   */
  private headers(target: AttemptTarget): Record<string, string> | string {
    const secretKey = this.config.secretKey;
    if (!secretKey) throw new Error('SECRET_KEY is not resolved: webhook secrets need it');
    const sealed = [target.secretSealed];
    if (target.previousSecretSealed && target.previousSecretExpiresAt && target.previousSecretExpiresAt > this.clock.now()) {
      sealed.push(target.previousSecretSealed);
    }
    let secrets: string[];
    try {
      secrets = sealed.map((value) => unsealWebhookSecret(secretKey, value));
    } catch {
      this.logger.error(`The secret of webhook endpoint ${target.endpointId} cannot be unsealed: was SECRET_KEY replaced?`);
      return 'Not sent: the endpoint’s secret cannot be read on the server (rotate the secret).';
    }
    return {
      // The wall clock, not the injected one: the receiver checks the timestamp against its own clock to
      // refuse replays (Standard Webhooks: five minutes), whatever time the tests pretend it is here.
      ...signedHeaders(secrets, `msg_${target.messageId}`, new Date(), target.body),
      'content-type': 'application/json',
      'user-agent': this.userAgent,
    };
  }

  /** Records the attempt and what follows from it; false when another run of the job recorded it first (or the endpoint is gone). */
  private async record(
    tx: EntityManager,
    job: WebhookAttemptJob,
    target: AttemptTarget,
    startedAt: Date,
    response: WebhookResponse,
  ): Promise<boolean> {
    // The endpoint first, then the delivery: delete() locks them in this order too. NO KEY UPDATE lets the
    // fan-out's inserts (their foreign keys' KEY SHARE locks) go on meanwhile.
    const [endpointRow] = (await tx.query(this.lockEndpointSql, [target.endpointId])) as object[];
    if (!endpointRow) return false;
    const endpoint = this.lockedEndpoint.map(endpointRow);
    const [deliveryRow] = (await tx.query(this.lockDeliverySql, [job.deliveryId])) as object[];
    const delivery = deliveryRow && this.lockedDelivery.map(deliveryRow);
    if (!delivery || !awaits(delivery, job)) return false;
    await tx.query(this.insertAttemptSql, [
      randomUUID(),
      job.deliveryId,
      job.number,
      job.trigger,
      startedAt,
      Math.max(0, Math.round(response.durationMs)),
      response.outcome,
      response.status,
      response.bodyExcerpt?.slice(0, 2048) ?? null,
      response.error?.slice(0, 500) ?? null,
    ]);
    if (response.outcome === 'succeeded') {
      await this.settle(tx, job, startedAt, 'succeeded', null);
      await tx.query(`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`, [target.endpointId]);
      return true;
    }
    const now = this.clock.now();
    const date = (value: Date | string | null) => (value ? new Date(value) : null);
    // Only failure without a break counts: a failure long after the previous one starts a new streak.
    const failingSince = failureStreakSince(date(endpoint.failingSince), date(endpoint.lastFailedAt), startedAt);
    await tx.query(
      `UPDATE webhook_endpoints SET failing_since = $2, last_failed_at = GREATEST(coalesce(last_failed_at, $3), $3) WHERE id = $1`,
      [target.endpointId, failingSince, startedAt],
    );
    if (endpoint.state === 'active' && failingTooLong(failingSince, now)) {
      await this.settle(tx, job, startedAt, 'failed', null);
      await this.disable(tx, target.endpointId, failingSince, now, response);
      return true;
    }
    // Disabled meanwhile (by another of its deliveries): no retry, as for those it had scheduled.
    const next = endpoint.state === 'disabled' ? null : await this.nextAttempt(tx, job, now);
    await this.settle(tx, job, startedAt, next ? 'scheduled' : 'failed', next);
    return true;
  }

  private async settle(tx: EntityManager, job: WebhookAttemptJob, startedAt: Date, state: WebhookDeliveryState, next: Date | null) {
    await tx.query(`UPDATE webhook_deliveries SET state = $2, attempts = $3, last_attempt_at = $4, next_attempt_at = $5 WHERE id = $1`, [
      job.deliveryId,
      state,
      job.number,
      startedAt,
      next,
    ]);
  }

  /** When the next automatic attempt is due after this failed one, or null when none follows. */
  private async nextAttempt(tx: EntityManager, job: WebhookAttemptJob, now: Date): Promise<Date | null> {
    switch (job.trigger) {
      case 'test':
        return null;
      case 'redelivery':
        return job.resumeAt ? new Date(job.resumeAt) : null;
      case 'automatic': {
        const [{ failed }] = (await tx.query(
          `SELECT count(*)::int AS failed FROM webhook_attempts WHERE delivery_id = $1 AND trigger = 'automatic' AND outcome = 'failed'`,
          [job.deliveryId],
        )) as [{ failed: number }];
        const delay = retryDelayMs(failed);
        return delay === null ? null : new Date(now.getTime() + delay);
      }
    }
  }

  /** The endpoint failed for too long: disabled, its scheduled deliveries failed, the people who manage it told (a job per person). */
  private async disable(tx: EntityManager, endpointId: string, failingSince: Date, now: Date, last: WebhookResponse): Promise<void> {
    const lastly = last.status !== null ? `the last answered HTTP ${last.status}` : `the last failed: ${last.error ?? 'no response'}`;
    const reason = `Every delivery failed for more than 72 hours (since ${failingSince.toISOString()}); ${lastly}.`.slice(0, 1000);
    await tx.query(
      `UPDATE webhook_endpoints SET state = 'disabled', disabled_reason = $2, disabled_at = $3, updated_at = $3 WHERE id = $1`,
      [endpointId, reason, now],
    );
    await tx.query(
      `UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL WHERE endpoint_id = $1 AND state = 'scheduled'`,
      [endpointId],
    );
    const managers = await this.managersOf(tx, endpointId);
    for (const userId of managers) {
      await this.jobs.enqueue(
        WEBHOOK_NOTICES,
        { endpointId, userId, disabledAt: now.toISOString() },
        { tx, id: derivedJobId('webhook-disabled', endpointId, userId, now.toISOString()) },
      );
    }
    this.logger.warn(`Webhook endpoint ${endpointId} disabled: ${reason} (${managers.length} people told)`);
  }

  /**
   * The active people who manage an endpoint, read in `tx`: the owners and admins of its organizer, or
   * the owner of its application, each through the module that keeps them.
   */
  private async managersOf(tx: EntityManager, endpointId: string): Promise<string[]> {
    const endpoint = await tx
      .getRepository(WebhookEndpointEntity)
      .findOne({ where: { id: endpointId }, select: { id: true, organizerId: true, applicationId: true } });
    if (!endpoint) return [];
    let ids: string[] = [];
    if (endpoint.organizerId) ids = await this.organizers.managerIds(endpoint.organizerId, tx);
    else if (endpoint.applicationId) {
      const ownerId = (await this.applications.ownership({ id: endpoint.applicationId }, tx))?.ownerId;
      ids = ownerId ? [ownerId] : [];
    }
    return this.users.activeIds(ids, tx);
  }
}
