import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import PgBoss from 'pg-boss';
import type { EntityManager } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { JOB_SCHEMA } from '../database/migrations/1796200000002-job-queue.js';
import { OwnedPool } from '../database/owned-pool.js';
import { Metrics } from '../metrics/metrics.js';
import { poolDatabase, transactionDatabase } from './job-database.js';
import { JobHandler, JobKind } from './job-kind.js';
import { JOBS_WORK } from './jobs.tokens.js';
import { findJob, JobListState, JobRecord, listJobs } from './job-records.js';
import { QueueState, readQueueStates } from './queue-states.js';

export interface EnqueueOptions {
  /** The transaction of the change the job is about: the job commits or rolls back with it. */
  tx?: EntityManager;
  /** A UUID that makes the job unique: a second enqueue with the same id is a no-op (returns null). */
  id?: string;
  /** Not before this time. */
  startAfter?: Date;
}

/** Completed jobs leave the queue's table after an hour (into pg-boss's archive, deleted after 7 days). */
const ARCHIVE_COMPLETED_AFTER_SECONDS = 3600;
/** Failed jobs, the dead letters, stay where an operator can see and retry them for 30 days. */
const ARCHIVE_FAILED_AFTER_SECONDS = 30 * 86400;
/** How often one process (whichever takes the turn) expires attempts of dead processes and archives. */
const MAINTENANCE_INTERVAL_SECONDS = 10;
const POLLING_INTERVAL_SECONDS = 1;

/**
 * The durable job queue (pg-boss on the service's database; docs/operations.md, "Jobs"). At least
 * once: a job is retried with exponential backoff until it succeeds or its retries run out, and then
 * kept as `failed` (the dead letters: `npm run cli -- jobs:list --state failed`, `jobs:retry`).
 *
 * Every server process works: each instance and each of its WORKERS polls every queue that has a
 * handler, and a job is taken by one of them (FOR UPDATE SKIP LOCKED). The CLI only enqueues.
 */
@Injectable()
export class JobQueue implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Jobs');
  private readonly boss: PgBoss;
  private readonly kinds = new Map<string, { kind: JobKind<unknown>; handler?: JobHandler<unknown> }>();
  private started = false;
  private stopping?: Promise<void>;

  constructor(
    private readonly owned: OwnedPool,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
    @Inject(JOBS_WORK) private readonly work: boolean,
  ) {
    this.boss = new PgBoss({
      db: poolDatabase(owned, JOB_SCHEMA, (err) =>
        this.logger.warn(
          `Job queue: an attempt's outcome could not be recorded (${err instanceof Error ? err.message : String(err)}); ` +
            'the job is retried once its attempt expires',
        ),
      ),
      schema: JOB_SCHEMA,
      migrate: false,
      supervise: work,
      schedule: false,
      maintenanceIntervalSeconds: MAINTENANCE_INTERVAL_SECONDS,
      archiveCompletedAfterSeconds: ARCHIVE_COMPLETED_AFTER_SECONDS,
      archiveFailedAfterSeconds: ARCHIVE_FAILED_AFTER_SECONDS,
    });
    this.boss.on('error', (err: Error) => this.logger.warn(`Job queue: ${err.message}`));
    metrics.jobQueues(() => this.states());
  }

  /** Declares a kind of job (so its queue exists) without running it in this process. */
  declare<T>(kind: JobKind<T>): void {
    if (!this.kinds.has(kind.queue)) this.kinds.set(kind.queue, { kind: kind as JobKind<unknown> });
  }

  /** Runs jobs of this kind in the server's processes. Called from a feature module's `onModuleInit`. */
  handle<T>(kind: JobKind<T>, handler: JobHandler<T>): void {
    const known = this.kinds.get(kind.queue);
    if (known?.handler) throw new Error(`Two handlers for jobs of queue "${kind.queue}"`);
    this.kinds.set(kind.queue, { kind: kind as JobKind<unknown>, handler: handler as JobHandler<unknown> });
  }

  /**
   * Adds a job. With `tx`, in that transaction (it runs only if the transaction commits). Returns the
   * job's id, or null when `id` was given and a job with that id exists already.
   */
  async enqueue<T extends object>(kind: JobKind<T>, data: T, options: EnqueueOptions = {}): Promise<string | null> {
    const id = await this.boss.send(kind.queue, data, {
      ...(options.id !== undefined && { id: options.id }),
      ...(options.startAfter !== undefined && { startAfter: options.startAfter }),
      expireInSeconds: kind.expireInSeconds,
      ...(options.tx && { db: transactionDatabase(options.tx) }),
    });
    if (id === null && options.id === undefined) {
      throw new Error(`No job queue "${kind.queue}": it is created at start-up of a server that declares it`);
    }
    return id;
  }

  /**
   * Adds many jobs in one statement (a fan-out): each with its own id, so enqueueing the same ones again
   * (the fan-out retried) adds nothing.
   */
  async enqueueMany<T extends object>(kind: JobKind<T>, jobs: { id: string; data: T; startAfter?: Date }[]): Promise<void> {
    for (let i = 0; i < jobs.length; i += 500) {
      await this.boss.insert(
        jobs.slice(i, i + 500).map((job) => ({
          id: job.id,
          name: kind.queue,
          data: job.data,
          expireInSeconds: kind.expireInSeconds,
          ...(job.startAfter !== undefined && { startAfter: job.startAfter }),
        })),
      );
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.ensureQueues();
    if (!this.work) return;
    await this.boss.start();
    this.started = true;
    for (const { kind, handler } of this.kinds.values()) {
      if (!handler) continue;
      await this.boss.work<object>(
        kind.queue,
        { batchSize: this.config.jobs.concurrency, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS, includeMetadata: true },
        (jobs) => this.runBatch(kind, handler, jobs),
      );
    }
  }

  /**
   * Stops taking jobs, and waits up to `waitMs` for those running; any still running then are failed,
   * to be retried (by another process, or this one after its restart). Called on SIGTERM while HTTP
   * drains (stopOnSignals), and by Nest's shutdown hooks.
   */
  stop(waitMs: number): Promise<void> {
    if (!this.started) return Promise.resolve();
    this.stopping ??= this.boss.stop({ graceful: true, wait: true, close: false, timeout: Math.max(1000, waitMs) });
    return this.stopping;
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop(Math.max(1000, this.config.shutdownTimeoutMs / 2));
  }

  /** Depth, age and failures of every declared queue (metrics, the CLI). */
  states(): Promise<QueueState[]> {
    return readQueueStates(this.query);
  }

  /** The jobs of one state, newest first (`jobs:list`). */
  list(state: JobListState, queue: string | undefined, limit: number): Promise<JobRecord[]> {
    return listJobs(this.query, state, queue, limit);
  }

  /** One job and its data (`jobs:show`). */
  find(id: string): ReturnType<typeof findJob> {
    return findJob(this.query, id);
  }

  /**
   * Gives failed jobs one more attempt, due now (`jobs:retry`; pg-boss's retry). Returns what became of each id: a job
   * that is not failed is left alone.
   */
  async retry(ids: string[]): Promise<{ id: string; outcome: 'retried' | 'not failed' | 'not found'; state?: string }[]> {
    const results = [];
    for (const id of ids) {
      const job = await this.find(id);
      if (!job || job.archived) results.push({ id, outcome: 'not found' as const });
      else if (job.state !== 'failed') results.push({ id, outcome: 'not failed' as const, state: job.state });
      else {
        await this.boss.retry(job.queue, id);
        results.push({ id, outcome: 'retried' as const });
      }
    }
    return results;
  }

  /** The ids of every failed job (of one queue when given). */
  async failedIds(queue?: string): Promise<string[]> {
    const { rows } = await this.query(`SELECT id FROM ${JOB_SCHEMA}.job WHERE state = 'failed' AND ($1::text IS NULL OR name = $1)`, [
      queue ?? null,
    ]);
    return rows.map((row) => row.id as string);
  }

  private readonly query = (text: string, values: unknown[]) => this.owned.pool.query(text, values);

  /** Every declared kind has its queue, with the retry settings of the configuration. */
  private async ensureQueues(): Promise<void> {
    const { retryLimit, retryDelaySeconds } = this.config.jobs;
    for (const { kind } of this.kinds.values()) {
      const options = { retryLimit, retryDelay: retryDelaySeconds, retryBackoff: true, expireInSeconds: kind.expireInSeconds };
      const existing = await this.boss.getQueue(kind.queue);
      if (!existing) await this.boss.createQueue(kind.queue, { name: kind.queue, policy: 'standard', ...options });
      else if (
        existing.retryLimit !== retryLimit ||
        existing.retryDelay !== retryDelaySeconds ||
        existing.retryBackoff !== true ||
        existing.expireInSeconds !== kind.expireInSeconds
      ) {
        await this.boss.updateQueue(kind.queue, { name: kind.queue, policy: 'standard', ...options });
      }
    }
  }

  private async runBatch(kind: JobKind<unknown>, handler: JobHandler<unknown>, jobs: PgBoss.JobWithMetadata<object>[]): Promise<void> {
    await Promise.all(
      jobs.map(async (job) => {
        const label = kind.label?.(job.data) ?? kind.queue;
        try {
          await handler(job.data, { id: job.id, retryCount: job.retryCount });
          this.metrics.jobCompleted(label);
        } catch (err) {
          this.metrics.jobFailed(label);
          const message = err instanceof Error ? err.message : String(err);
          const last = job.retryCount >= job.retryLimit;
          this.logger.warn(
            `Job ${job.id} (${label}) failed on attempt ${job.retryCount + 1} of ${job.retryLimit + 1}: ${message}` +
              (last ? `; no retry left, kept as failed (npm run cli -- jobs:retry --id ${job.id})` : '; it will be retried'),
          );
          // Only this job: the rest of the batch completes (pg-boss completes what is still active).
          await this.boss.fail(kind.queue, job.id, { message });
        }
      }),
    );
  }
}
