/** The most the readiness probe's `SELECT 1` may take: an answer slower than this is not ready. */
export const READINESS_TIMEOUT_MS = 1_500;

/** The most the liveness check's probe of the pool, or of a new connection, may take. */
export const LIVENESS_PROBE_TIMEOUT_MS = 5_000;

/** While the pool makes no progress, how often liveness checks it again (at most; only when /healthz asks). */
export const LIVENESS_CHECK_INTERVAL_MS = 2_000;
