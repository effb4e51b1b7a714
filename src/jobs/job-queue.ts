import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import PgBoss from 'pg-boss';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { JOB_SCHEMA } from '../database/migrations/1796200000002-job-queue.js';
import { isDatabaseUnavailable } from '../errors/database-unavailable.js';
import { OwnedPool } from '../database/owned-pool.js';
import type { DatabaseTarget } from '../database/database-target.js';
import { DATABASE_TARGET } from '../database/database-tokens.js';
import { Metrics } from '../metrics/metrics.js';
import { poolDatabase, transactionDatabase } from './job-database.js';
import { JobHandler, JobKind } from './job-kind.js';
import { JOBS_WORK } from './jobs.tokens.js';
import { findJob, JobListState, JobRecord, listJobs } from './job-records.js';
import { QueueState, readQueueStates } from './queue-states.js';
import { JobInsertion, jobInsertion } from './job-insertion.js';
import { QueueWorker } from './queue-worker.js';
import { RequestLoad } from './request-load.js';

export interface EnqueueOptions {
  /** The transaction of the change the job is about: the job commits or rolls back with it. */
  tx?: EntityManager;
  /** A UUID that makes the job unique: a second enqueue with the same id is a no-op (returns null). */
  id?: string;
  /** Not before this time. */
  startAfter?: Date;
}

/**
 * Completed jobs leave the queue's table after 12 hours (into pg-boss's archive, deleted after 7 days):
 * while there, a job enqueued again with the same id (a fan-out retried) is recognised and not added.
 */
const ARCHIVE_COMPLETED_AFTER_SECONDS = 12 * 3600;
/** Failed jobs, the dead letters, stay where an operator can see and retry them for 30 days. */
const ARCHIVE_FAILED_AFTER_SECONDS = 30 * 86400;
/** How often one process (whichever takes the turn) expires attempts of dead processes and archives. */
const MAINTENANCE_INTERVAL_SECONDS = 5;
const POLLING_INTERVAL_MS = 1000;
/** Requests answered at once from which jobs give way to them (see QueueWorker). */
const BUSY_REQUESTS = 16;
/** The advisory lock under which processes set up the queues, one at a time. */
const QUEUE_SETUP_LOCK = 727_274_004;

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
  private readonly namedStatements: boolean;
  private started = false;
  private readonly workers: QueueWorker<object>[] = [];
  private stopping?: Promise<void>;

  constructor(
    private readonly owned: OwnedPool,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
    @Inject(JOBS_WORK) private readonly work: boolean,
    @Inject(DATABASE_TARGET) target: DatabaseTarget,
    private readonly load: RequestLoad,
  ) {
    // As PreparedStatements: the serving pool of a PostgreSQL server whose connections are sessions of their own.
    this.namedStatements = work && target.kind === 'server' && target.pooling === 'session';
    this.boss = new PgBoss({
      db: poolDatabase(owned),
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
      ...(options.tx && { db: transactionDatabase(options.tx, this.namedStatements) }),
    });
    if (id === null && options.id === undefined) {
      throw new Error(`No job queue "${kind.queue}": it is created at start-up of a server that declares it`);
    }
    return id;
  }

  /**
   * A job's insert as a part of a statement of the caller's (a data-modifying CTE of the change the job
   * follows: one round trip for both), its data given by an SQL expression of that statement. The SQL
   * and settings are pg-boss's own, as `enqueue` sends them (captured, not run), its parameters
   * numbered from `firstParameter`; `data` may refer to the caller's parameters and CTEs. When the
   * expression comes out NULL (nothing to tell: the change it follows wrote nothing), no job is inserted.
   */
  async insertion<T extends object>(kind: JobKind<T>, firstParameter: number, data: string): Promise<JobInsertion> {
    let captured: { text: string; values: unknown[] } | undefined;
    const db: PgBoss.Db = {
      executeSql: (text, values) => {
        captured = { text, values };
        return Promise.resolve({ rows: [{ id: 'captured' }] } as never);
      },
    };
    await this.boss.send(kind.queue, {}, { expireInSeconds: kind.expireInSeconds, db });
    return jobInsertion(captured!, firstParameter, data);
  }

  /**
   * Adds many jobs (a fan-out), all or none, in one transaction: each with its own id, so enqueueing the
   * same ones again (the fan-out retried) adds nothing while the first ones are kept (completed jobs
   * stay 12 hours, longer than a job's retries last with the default settings).
   */
  async enqueueMany<T extends object>(kind: JobKind<T>, jobs: { id: string; data: T; startAfter?: Date }[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.dataSource.transaction(async (tx) => {
      for (let i = 0; i < jobs.length; i += 500) {
        await this.boss.insert(
          jobs.slice(i, i + 500).map((job) => ({
            id: job.id,
            name: kind.queue,
            data: job.data,
            expireInSeconds: kind.expireInSeconds,
            ...(job.startAfter !== undefined && { startAfter: job.startAfter }),
          })),
          { db: transactionDatabase(tx) },
        );
      }
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.settingUp('create the job queues', () => this.ensureQueues());
    if (!this.work) return;
    await this.settingUp('start the job queue', () => this.boss.start());
    this.started = true;
    for (const { kind, handler } of this.kinds.values()) {
      if (!handler) continue;
      const worker = new QueueWorker(this.boss, kind, handler, {
        concurrency: kind.concurrency?.(this.config) ?? this.config.jobs.concurrency,
        pollMs: POLLING_INTERVAL_MS,
        database: poolDatabase(this.owned),
        busy: this.busy,
        metrics: this.metrics,
        logger: this.logger,
      });
      this.workers.push(worker);
      worker.start();
    }
  }

  /**
   * Stops taking jobs, and waits up to `waitMs` for those running; any still running then are failed,
   * to be retried (by another process, or this one after its restart). Called on SIGTERM while HTTP
   * drains (stopOnSignals), and by Nest's shutdown hooks.
   */
  stop(waitMs: number): Promise<void> {
    if (!this.started) return Promise.resolve();
    this.stopping ??= (async () => {
      await Promise.all(this.workers.map((worker) => worker.stop(Math.max(1000, waitMs))));
      // pg-boss's maintenance timers; no job of ours is left to wait for.
      await this.boss.stop({ graceful: true, wait: true, close: false, timeout: 1000 });
    })();
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
        // Not pg-boss's retry(): it leaves `completed_on` (the failure's time) and `keep_until` as they
        // were, and its archiving takes a job in state `retry` completed over an hour ago for finished.
        await this.query(
          `UPDATE ${JOB_SCHEMA}.job
              SET state = 'retry', retry_limit = retry_count + 1, start_after = now(), completed_on = NULL, keep_until = now() + interval '14 days'
            WHERE name = $1 AND id = $2 AND state = 'failed'`,
          [job.queue, id],
        );
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

  /**
   * Whether a burst of requests is being answered (BUSY_REQUESTS or more at once): jobs then give way for
   * up to 3 s at a time (QueueWorker). Ordinary traffic does not hold them back.
   */
  private readonly busy = () => this.load.current >= BUSY_REQUESTS;

  /**
   * A step of start-up that a busy or briefly unreachable database must not turn into a dead process (a
   * worker of WORKERS starting beside the others on a loaded machine can wait past the pool's bound):
   * tried again for about 30 s while the database is unavailable, then the error stands.
   */
  private async settingUp(what: string, step: () => Promise<unknown>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await step();
        return;
      } catch (err) {
        if (!isDatabaseUnavailable(err) || attempt >= 6) throw err;
        this.logger.warn(`Could not ${what} yet (${err instanceof Error ? err.message : String(err)}); trying again`);
        await new Promise((resolve) => setTimeout(resolve, 1000 * 2 ** (attempt - 1)));
      }
    }
  }

  /**
   * Every declared kind has its queue, with the retry settings of the configuration. In one transaction
   * under an advisory lock: pg-boss's createQueue (a partition per queue) deadlocks when two processes
   * create the same queue at once (instances, WORKERS, the CLI starting together on a fresh database).
   */
  private async ensureQueues(): Promise<void> {
    const { retryLimit, retryDelaySeconds } = this.config.jobs;
    const client = await this.owned.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [QUEUE_SETUP_LOCK]);
      for (const { kind } of this.kinds.values()) {
        const options = {
          policy: 'standard',
          retryLimit,
          retryDelay: retryDelaySeconds,
          retryBackoff: true,
          expireInSeconds: kind.expireInSeconds,
        };
        const { rows } = await client.query<{ retry_limit: number; retry_delay: number; retry_backoff: boolean; expire_seconds: number }>(
          `SELECT retry_limit, retry_delay, retry_backoff, expire_seconds FROM ${JOB_SCHEMA}.queue WHERE name = $1`,
          [kind.queue],
        );
        const existing = rows[0];
        if (!existing) await client.query(`SELECT ${JOB_SCHEMA}.create_queue($1, $2)`, [kind.queue, options]);
        else if (
          existing.retry_limit !== retryLimit ||
          existing.retry_delay !== retryDelaySeconds ||
          existing.retry_backoff !== true ||
          existing.expire_seconds !== kind.expireInSeconds
        ) {
          await client.query(
            `UPDATE ${JOB_SCHEMA}.queue SET retry_limit = $2, retry_delay = $3, retry_backoff = true, expire_seconds = $4, updated_on = now() WHERE name = $1`,
            [kind.queue, retryLimit, retryDelaySeconds, kind.expireInSeconds],
          );
        }
      }
      await client.query('COMMIT');
      client.release();
    } catch (err) {
      // A connection whose transaction failed half-way is not given back to the pool as it is.
      client.release(err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
  }
}
