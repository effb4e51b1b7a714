/** The most the readiness probe's `SELECT 1` may take: an answer slower than this is not ready. */
export const READINESS_TIMEOUT_MS = 1_500;

/** The most the liveness check's probe of the pool, or of a new connection, may take. */
export const LIVENESS_PROBE_TIMEOUT_MS = 5_000;

/** While the pool makes no progress, how often liveness checks it again (at most; only when /healthz asks). */
export const LIVENESS_CHECK_INTERVAL_MS = 2_000;

/** Whether the promise resolves within `boundMs` (a rejection, now or later, is a no; the promise is not cancelled). */
export async function withinBound(promise: Promise<unknown>, boundMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), boundMs)));
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => false,
      ),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
