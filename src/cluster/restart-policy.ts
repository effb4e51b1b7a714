/** What the primary does about a worker that exited when nobody asked it to. */
export type RestartDecision = { action: 'restart'; delayMs: number; quickExits: number } | { action: 'give-up'; quickExits: number };

export interface RestartPolicyOptions {
  /** A worker that lived less than this after it was forked failed to start, or crashed right after. */
  quickExitMs: number;
  /** This many quick exits in a row and the primary stops: the cause will not go away by itself. */
  maxQuickExits: number;
  /** The replacement after the first quick exit waits this long, doubled after each further one… */
  firstDelayMs: number;
  /** …up to this. */
  maxDelayMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicyOptions = {
  quickExitMs: 10_000,
  maxQuickExits: 5,
  firstDelayMs: 500,
  maxDelayMs: 8_000,
};

/**
 * When to replace a dead worker. A worker that ran a while (a crash after hours) is replaced at once;
 * workers that die within seconds of their start (a port already taken, a database refusing
 * connections, a bug at start-up) are replaced after a back-off that doubles, and after
 * `maxQuickExits` of them in a row the primary gives up rather than fork forever. The count is for
 * the whole process group: any worker living past `quickExitMs` shows the cause has gone, and resets it.
 */
export class RestartPolicy {
  private quickExits = 0;

  constructor(private readonly options: RestartPolicyOptions = DEFAULT_RESTART_POLICY) {}

  /** A worker exited unexpectedly `livedMs` after it was forked. */
  exited(livedMs: number): RestartDecision {
    if (livedMs >= this.options.quickExitMs) {
      this.quickExits = 0;
      return { action: 'restart', delayMs: 0, quickExits: 0 };
    }
    this.quickExits++;
    if (this.quickExits >= this.options.maxQuickExits) return { action: 'give-up', quickExits: this.quickExits };
    const delayMs = Math.min(this.options.firstDelayMs * 2 ** (this.quickExits - 1), this.options.maxDelayMs);
    return { action: 'restart', delayMs, quickExits: this.quickExits };
  }

  /** A worker has now lived `quickExitMs`: whatever killed the ones before it is gone. */
  stable(): void {
    this.quickExits = 0;
  }
}
