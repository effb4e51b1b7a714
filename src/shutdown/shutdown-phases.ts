/** How the time between the signal and exit is spent (docs/operations.md, "Shutdown and drain"). */
export interface ShutdownPhases {
  /** Idle keep-alive connections stay open this long, so a request already on its way is answered. */
  idleGraceMs: number;
  /** Requests still running this long after the signal are cut. */
  drainMs: number;
  /** The process exits at this point whatever remains (SHUTDOWN_TIMEOUT_SECONDS). */
  exitMs: number;
}

const IDLE_GRACE_MS = 1000;
const CLOSE_RESERVE_MAX_MS = 2000;

/**
 * Splits the bound: the last fifth of it (at most 2 s) is kept for closing the application and the
 * database after the last response; the second before that belongs to the requests.
 */
export function shutdownPhases(boundMs: number): ShutdownPhases {
  const drainMs = boundMs - Math.min(CLOSE_RESERVE_MAX_MS, Math.round(boundMs / 5));
  return { idleGraceMs: Math.min(IDLE_GRACE_MS, Math.round(drainMs / 2)), drainMs, exitMs: boundMs };
}
