import type { Logger } from '@nestjs/common';
import type PgBoss from 'pg-boss';
import type { Metrics } from '../metrics/metrics.js';
import type { JobHandler, JobKind } from './job-kind.js';

export interface QueueWorkerOptions {
  /** Jobs of this queue run at once in this process. */
  concurrency: number;
  /** The wait between two looks at an empty queue. */
  pollMs: number;
  /**
   * Whether the process is busy answering requests: jobs then wait (up to MAX_YIELD_MS), so that a burst
   * of requests is not slowed by work that can come a moment later.
   */
  busy: () => boolean;
  /** pg-boss's statements (the service's pool): the worker notices when they fail. */
  database: PgBoss.Db;
  metrics: Metrics;
  logger: Logger;
}

/** Requests go first for at most this long; then one round of jobs runs whatever the load. */
const MAX_YIELD_MS = 3000;
const YIELD_STEP_MS = 200;
const WORK_SLICE_MS = 1000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Works one queue in this process: takes up to `concurrency` jobs (pg-boss's fetch: FOR UPDATE SKIP
 * LOCKED, so each job goes to one process), runs each on its own and records each outcome as soon as it
 * is known (complete, or fail to be retried), so a job that succeeded is never run again because a
 * neighbour was slow. pg-boss's own `work()` does neither: it settles a whole batch at once, and does
 * not await that settlement (an outage at that moment would be an unhandled rejection).
 *
 * While the database cannot be reached, the worker says so once, backs off (1 s, doubling to 10 s)
 * and carries on when it answers again; an outcome it could not record is retried a few times, then left
 * to the job's expiry (the job runs again: at least once).
 */
export class QueueWorker<T extends object> {
  private readonly running = new Map<string, Promise<void>>();
  private loop?: Promise<void>;
  private stopped = false;
  private wake?: () => void;
  private outage = 0;

  constructor(
    private readonly boss: PgBoss,
    private readonly kind: JobKind<T>,
    private readonly handler: JobHandler<T>,
    private readonly options: QueueWorkerOptions,
  ) {}

  start(): void {
    this.loop ??= this.work();
  }

  /**
   * Takes no more jobs; waits up to `waitMs` for those running, then fails the ones still running so that
   * they are retried (by another process, or this one after its restart).
   */
  async stop(waitMs: number): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    const all = Promise.allSettled([...this.running.values()]);
    await Promise.race([all, sleep(waitMs)]);
    const left = [...this.running.keys()];
    if (left.length === 0) return;
    try {
      for (const id of left) await this.boss.fail(this.kind.queue, id, { message: 'the process stopped while the job ran' });
      this.options.logger.warn(`${left.length} job(s) of ${this.kind.queue} still running at shutdown: failed, to be retried`);
    } catch (err) {
      this.options.logger.warn(
        `${left.length} job(s) of ${this.kind.queue} still running at shutdown could not be failed (${message(err)}): they run again after their expiry`,
      );
    }
  }

  private async work(): Promise<void> {
    // While requests crowd in, jobs wait up to MAX_YIELD_MS, then work freely for WORK_SLICE_MS before
    // they may wait again: under a load that never ends, jobs still get a quarter of the time.
    let yieldingSince: number | undefined;
    let workingSince = -Infinity;
    while (!this.stopped) {
      const now = performance.now();
      if (now - workingSince > WORK_SLICE_MS && this.options.busy()) {
        yieldingSince ??= now;
        if (now - yieldingSince < MAX_YIELD_MS) {
          await this.idle(YIELD_STEP_MS);
          continue;
        }
        workingSince = now;
      }
      yieldingSince = undefined;
      const free = this.options.concurrency - this.running.size;
      if (free <= 0) {
        await this.idle(this.options.pollMs);
        continue;
      }
      const jobs = await this.fetch(free);
      if (jobs === undefined) {
        await this.idle(Math.min(10_000, 1000 * 2 ** Math.min(this.outage - 1, 4)));
        continue;
      }
      for (const job of jobs) this.run(job);
      if (jobs.length < free) await this.idle(this.options.pollMs);
    }
  }

  /** Up to `count` jobs, or undefined when the database did not answer. */
  private async fetch(count: number): Promise<PgBoss.JobWithMetadata<T>[] | undefined> {
    let failure: unknown;
    const database: PgBoss.Db = {
      executeSql: async (text, values) => {
        try {
          return await this.options.database.executeSql(text, values);
        } catch (err) {
          failure = err;
          throw err;
        }
      },
    };
    // pg-boss's fetch swallows the statement's error (and answers no job): `failure` keeps it.
    const jobs = await this.boss.fetch<T>(this.kind.queue, { batchSize: count, includeMetadata: true, db: database });
    if (failure !== undefined) {
      if (this.outage++ === 0) this.options.logger.warn(`Job queue ${this.kind.queue} cannot take jobs: ${message(failure)}; trying again`);
      return undefined;
    }
    if (this.outage > 0) {
      this.options.logger.log(`Job queue ${this.kind.queue} takes jobs again (after ${this.outage} failed attempts)`);
      this.outage = 0;
    }
    return jobs;
  }

  private run(job: PgBoss.JobWithMetadata<T>): void {
    const done = this.attempt(job).finally(() => {
      this.running.delete(job.id);
      this.wake?.();
    });
    this.running.set(job.id, done);
  }

  private async attempt(job: PgBoss.JobWithMetadata<T>): Promise<void> {
    let label = this.kind.queue;
    let failure: string | undefined;
    // The label comes from the job's data, which may be anything: a job that cannot be labelled fails, as one whose handler throws.
    try {
      label = this.kind.label?.(job.data) ?? label;
      await this.handler(job.data, { id: job.id, retryCount: job.retryCount });
      this.options.metrics.jobCompleted(label);
    } catch (err) {
      failure = message(err);
      this.options.metrics.jobFailed(label);
      const last = job.retryCount >= job.retryLimit;
      this.options.logger.warn(
        `Job ${job.id} (${label}) failed on attempt ${job.retryCount + 1} of ${job.retryLimit + 1}: ${failure}` +
          (last ? `; no retry left, kept as failed (npm run cli -- jobs:retry --id ${job.id})` : '; it will be retried'),
      );
    }
    await this.record(job, label, failure);
  }

  /** Records the outcome; a database that does not answer gets a few more tries over about 15 s. */
  private async record(job: PgBoss.JobWithMetadata<T>, label: string, failure: string | undefined): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        if (failure === undefined) await this.boss.complete(this.kind.queue, job.id);
        else await this.boss.fail(this.kind.queue, job.id, { message: failure });
        return;
      } catch (err) {
        if (tries >= 5) {
          this.options.logger.warn(
            `Job ${job.id} (${label}) ${failure === undefined ? 'completed' : 'failed'}, but that could not be recorded (${message(err)}): it runs again after its expiry`,
          );
          return;
        }
        await sleep(1000 * 2 ** (tries - 1));
      }
    }
  }

  private async idle(ms: number): Promise<void> {
    if (this.stopped) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
    this.wake = undefined;
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
