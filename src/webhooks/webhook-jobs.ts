import { derivedJobId } from '../jobs/job-id.js';
import { jobKind } from '../jobs/job-kind.js';
import type { WebhookAttemptTrigger } from './webhook-states.js';

/** One HTTP attempt of one delivery. */
export interface WebhookAttemptJob {
  deliveryId: string;
  /** The attempt's number (1 for the first): the job does nothing unless the delivery has made number - 1 attempts. */
  number: number;
  trigger: WebhookAttemptTrigger;
  /**
   * A redelivery asked for while the delivery waited for its next automatic attempt: that attempt's
   * time (ISO 8601), kept if the redelivery fails, so a redelivery does not restart the schedule.
   */
  resumeAt?: string;
}

/** An endpoint was disabled for failing: one mail to one of the people who manage it. */
export interface WebhookDisabledNotice {
  endpointId: string;
  userId: string;
  /** When it was disabled (ISO 8601): a notice about an earlier disabling is not sent. */
  disabledAt: string;
}

/**
 * An attempt is bounded at 10 s (the outbound client's timeout) plus two short transactions. Attempts
 * mostly wait on receivers, so a process runs WEBHOOKS_CONCURRENCY of them at once: a receiver that
 * takes its full 10 s holds one slot, not the whole queue.
 */
export const WEBHOOK_ATTEMPT = jobKind<WebhookAttemptJob>('webhook-attempt', {
  expireInSeconds: 30,
  label: (job) => `webhook.${job.trigger}`,
  concurrency: (config) => config.webhooks.concurrency,
});

export const WEBHOOK_NOTICES = jobKind<WebhookDisabledNotice>('webhook-notices', {
  expireInSeconds: 30,
  label: () => 'webhook.disabled',
});

/** The job of an automatic attempt, derived from the delivery and the attempt's number: enqueued twice, it is added once. */
export function attemptJobId(deliveryId: string, number: number): string {
  return derivedJobId('webhook-attempt', deliveryId, String(number));
}

/** The job settings that bound how long an attempt job can live (AppConfig.jobs). */
export interface JobRetrySettings {
  retryLimit: number;
  retryDelaySeconds: number;
}

const MIN_STUCK_AFTER_MS = 15 * 60_000;

/**
 * How long a delivery may stay `queued` (wall time) before its attempt job is taken for lost (it used up
 * its retries: say JOBS_RETRY_LIMIT=0 and a process killed mid-attempt): longer than the job can live,
 * every run expiring after 30 s and pg-boss's exponential backoff between them (each wait up to twice
 * its nominal length), plus five minutes; at least 15 minutes. With the defaults (10 retries, from 10 s
 * doubling) about 11 h 32 min; with JOBS_RETRY_LIMIT=0, 15 minutes.
 */
export function stuckQueuedAfterMs(jobs: JobRetrySettings): number {
  const lifetimeSeconds =
    WEBHOOK_ATTEMPT.expireInSeconds * (jobs.retryLimit + 1) + 2 * jobs.retryDelaySeconds * (2 ** (jobs.retryLimit + 1) - 2);
  return Math.max(MIN_STUCK_AFTER_MS, lifetimeSeconds * 1000 + 5 * 60_000);
}

/** The job of an attempt queued again after its first job was lost: derived from when it was queued, so it differs from that job. */
export function requeuedAttemptJobId(deliveryId: string, number: number, queuedAt: Date): string {
  return derivedJobId('webhook-attempt', deliveryId, String(number), queuedAt.toISOString());
}
