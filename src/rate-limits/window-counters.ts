/** One caller's window: points spent, and when the window ends (ms since the epoch). */
interface Window {
  used: number;
  resetAt: number;
}

/** What a charge found: the window after it (or, refused, as it was), and whether it was refused. */
export interface Charged {
  /** Points spent in the window: with this charge, or without it when refused. */
  used: number;
  resetAt: number;
  refused: boolean;
}

/**
 * Fixed-window counters in this process's memory, at most `maxKeys` of them. Check and increment are one
 * synchronous step, so a charge that does not fit is never counted. Windows all have one length, so the
 * Map's insertion order (a window is re-inserted when it restarts) is the order they end in: expired
 * windows are swept from the front as new ones are made, and when the Map is full the oldest one goes,
 * so a flood of distinct addresses costs bounded memory (the evicted callers start a fresh window).
 * rate-limiter-flexible's in-memory limiter keeps a timer and an entry per key without any bound.
 */
export class WindowCounters {
  private readonly windows = new Map<string, Window>();
  /** Windows dropped while still running because the Map was full. */
  evicted = 0;

  constructor(
    private readonly windowMs: number,
    private readonly maxKeys: number,
  ) {}

  get size(): number {
    return this.windows.size;
  }

  /** `now`: the Clock's time in ms since the epoch. */
  charge(key: string, points: number, limit: number, now: number): Charged {
    let window = this.windows.get(key);
    if (window === undefined || window.resetAt <= now) {
      if (window !== undefined) this.windows.delete(key);
      this.sweep(now);
      window = { used: 0, resetAt: now + this.windowMs };
      this.windows.set(key, window);
    }
    if (window.used + points > limit) return { used: window.used, resetAt: window.resetAt, refused: true };
    window.used += points;
    return { used: window.used, resetAt: window.resetAt, refused: false };
  }

  /** Drops up to two expired windows from the front, and the oldest one if the Map is still full. */
  private sweep(now: number): void {
    for (let i = 0; i < 2; i++) {
      const oldest = this.windows.entries().next();
      if (oldest.done || oldest.value[1].resetAt > now) break;
      this.windows.delete(oldest.value[0]);
    }
    if (this.windows.size >= this.maxKeys) {
      const oldest = this.windows.keys().next();
      if (!oldest.done) {
        this.windows.delete(oldest.value);
        this.evicted++;
      }
    }
  }
}
