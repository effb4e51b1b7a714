import type { FastifyRequest } from 'fastify';

/** How long identical failures are counted before the count is logged. */
export const REPEAT_INTERVAL_MS = 10_000;

interface Burst {
  count: number;
  timer: NodeJS.Timeout;
}

/**
 * Logs a failure that repeats (the database is down and every request says so) once per interval
 * with a count, instead of once per request: the first occurrence is logged at once with its error,
 * the others in the interval are counted, and one line at the end of the interval says how many.
 */
export class RepeatedFailureLog {
  private readonly bursts = new Map<string, Burst>();

  constructor(private readonly intervalMs = REPEAT_INTERVAL_MS) {}

  /** The request's own logger says it first (with its request id); the server's logger gives the count. */
  warn(request: Pick<FastifyRequest, 'log' | 'server'>, key: string, fields: Record<string, unknown>, message: string): void {
    const burst = this.bursts.get(key);
    if (burst) {
      burst.count++;
      return;
    }
    request.log.warn(fields, message);
    const logger = request.server.log;
    const timer = setTimeout(() => {
      const ended = this.bursts.get(key);
      this.bursts.delete(key);
      if (ended && ended.count > 0) {
        logger.warn(
          { repeated: ended.count, intervalMs: this.intervalMs },
          `${message} (${ended.count} more in the last ${this.intervalMs / 1000} s)`,
        );
      }
    }, this.intervalMs);
    timer.unref();
    this.bursts.set(key, { count: 0, timer });
  }
}

/** One per process: every edge that reports an unreachable database counts into the same line. */
export const repeatedFailures = new RepeatedFailureLog();
