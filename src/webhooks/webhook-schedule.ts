const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * The waits between automatic attempts of one delivery: after the failed attempt n, the next is due
 * RETRY_DELAYS_MS[n - 1] later (Clock time). Nine attempts over about 2 days 21.6 hours, no jitter:
 * due deliveries are taken by the sweeper in batches, so a burst of retries is spread by its pace.
 */
export const RETRY_DELAYS_MS: readonly number[] = [MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR, 24 * HOUR];

/** Attempts of a delivery that the schedule makes, the first included. */
export const AUTOMATIC_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** An endpoint whose attempts have all failed for this long (since its last success) is disabled. */
export const DISABLE_AFTER_FAILING_MS = 72 * HOUR;

/** The wait before the next automatic attempt after `failed` automatic attempts failed, or null when none is left. */
export function retryDelayMs(failed: number): number | null {
  return RETRY_DELAYS_MS[failed - 1] ?? null;
}

/** Whether an endpoint failing since `failingSince` has failed long enough, at `now`, to be disabled. */
export function failingTooLong(failingSince: Date | null, now: Date): boolean {
  return failingSince !== null && now.getTime() - failingSince.getTime() >= DISABLE_AFTER_FAILING_MS;
}

/**
 * A failure this long after the endpoint's previous one starts a new failure streak: longer than the
 * longest wait between retries (24 h) with an hour to spare for the sweeper's pace, so a delivery
 * retried on schedule keeps its streak, and a first failure after days without traffic does not count
 * the quiet days as failing.
 */
export const FAILURE_STREAK_GAP_MS = Math.max(...RETRY_DELAYS_MS) + HOUR;

/**
 * Since when an endpoint has been failing without a break, counting the failed attempt that started at
 * `failedAt`: the stored streak's start if the previous failure was recent enough (and no success
 * cleared it), otherwise `failedAt` itself.
 */
export function failureStreakSince(failingSince: Date | null, lastFailedAt: Date | null, failedAt: Date): Date {
  if (!failingSince || !lastFailedAt) return failedAt;
  return failedAt.getTime() - lastFailedAt.getTime() > FAILURE_STREAK_GAP_MS ? failedAt : failingSince;
}
