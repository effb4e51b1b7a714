import type { AppConfig } from '../config/config.schema.js';

/**
 * A kind of job: the pg-boss queue its jobs wait in, and how long one attempt may run. Each feature
 * declares its own kinds beside their handlers (`JobQueue.handle`).
 */
export interface JobKind<T> {
  /** The queue's name (pg-boss: letters, digits, `-`, `_`, `.`, `/`). */
  readonly queue: string;
  /**
   * An attempt still running this long after it started is taken to have died with its process, and
   * retried (pg-boss's expiry). It bounds how long a job a killed process had taken waits: keep it
   * short, above the slowest attempt (a mail gives up after 25 s, SMTP_SEND_LIMIT_MS).
   */
  readonly expireInSeconds: number;
  /** The `kind` label of the job counters in /metrics; the queue's name when absent. */
  readonly label?: (data: T) => string;
  /**
   * Jobs of this kind one process runs at once, when not JOBS_CONCURRENCY: for jobs that mostly wait on
   * someone else (a webhook receiver), not on the CPU or the database.
   */
  readonly concurrency?: (config: AppConfig) => number;
}

export function jobKind<T>(
  queue: string,
  options: { expireInSeconds: number; label?: (data: T) => string; concurrency?: (config: AppConfig) => number },
): JobKind<T> {
  return { queue, ...options };
}

/** What a handler knows of the job it runs. */
export interface JobContext {
  id: string;
  /** 0 on the first attempt. */
  retryCount: number;
}

/** Runs one job; throwing fails this attempt, and the job is retried later (or kept as failed when no retry is left). */
export type JobHandler<T> = (data: T, job: JobContext) => Promise<void>;
