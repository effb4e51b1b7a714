import { Logger } from '@nestjs/common';

/** How long slow waits are counted before one line says how many there were. */
export const POOL_WAIT_LOG_INTERVAL_MS = 10_000;

/** One wait for a pooled connection: how long, and whether it was given up (the statement shed). */
export type PoolWaitListener = (waitedMs: number, shed: boolean) => void;

interface Window {
  slow: number;
  shed: number;
  longestMs: number;
}

/**
 * The waits for a pooled connection: each one goes to the listeners (the metrics), and waits longer
 * than the threshold are logged at `warn`, the first at once and the rest as one line per interval with
 * their number and the longest, never one line per request (a saturated pool would flood the log).
 */
export class PoolWaits {
  private readonly logger = new Logger('DatabasePool');
  private readonly listeners: PoolWaitListener[] = [];
  private window?: Window;

  constructor(
    /** Waits at least this long are logged. */
    readonly slowMs: number,
    private readonly intervalMs = POOL_WAIT_LOG_INTERVAL_MS,
  ) {}

  onWait(listener: PoolWaitListener): void {
    this.listeners.push(listener);
  }

  record(waitedMs: number, shed: boolean): void {
    for (const listener of this.listeners) listener(waitedMs, shed);
    if (waitedMs < this.slowMs && !shed) return;
    if (this.window) {
      this.window.slow++;
      if (shed) this.window.shed++;
      this.window.longestMs = Math.max(this.window.longestMs, waitedMs);
      return;
    }
    this.logger.warn(
      shed
        ? `A statement waited ${Math.round(waitedMs)} ms for a database connection and was refused (503): the pool is saturated or the database slow`
        : `A statement waited ${Math.round(waitedMs)} ms for a database connection (threshold ${this.slowMs} ms): the pool is saturated or the database slow`,
    );
    const window: Window = { slow: 0, shed: 0, longestMs: 0 };
    this.window = window;
    setTimeout(() => {
      this.window = undefined;
      if (window.slow === 0) return;
      this.logger.warn(
        `${window.slow} more statements waited over ${this.slowMs} ms for a database connection in the last ${this.intervalMs / 1000} s ` +
          `(${window.shed} refused with 503, longest ${Math.round(window.longestMs)} ms)`,
      );
    }, this.intervalMs).unref();
  }
}
