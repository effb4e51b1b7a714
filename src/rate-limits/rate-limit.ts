/**
 * Which budget a request spends: its user's (authenticated API requests), its address's (anonymous),
 * its OAuth client's (the token endpoint), or (dynamic client registration) its network's registrations.
 */
export type RateLimitBudget = 'user' | 'address' | 'client' | 'registration';

/** Who pays for a request: a budget and the key of the caller within it. */
export interface RateLimitSubject {
  budget: RateLimitBudget;
  key: string;
}

/** A budget after a request was charged to it: what the `X-RateLimit-*` headers and `Query.rateLimit` say. */
export interface RateLimitState {
  /** Points per window. */
  limit: number;
  /** Points spent in this window, this request included. */
  used: number;
  /** Points left in this window (never below 0). */
  remaining: number;
  /** What this request cost. */
  cost: number;
  /** When the window ends and the budget is whole again (ms since the epoch). */
  resetAt: number;
}

/** A request refused because its budget is spent: answered 429 with `Retry-After` in each transport's shape. */
export class RateLimitError extends Error {
  /**
   * @param retryAfterSeconds whole seconds until the window ends, at least 1 (`retryAfterSeconds`, at
   *   the moment of the refusal)
   */
  constructor(
    readonly subject: RateLimitSubject,
    readonly state: RateLimitState,
    readonly retryAfterSeconds: number,
  ) {
    super(
      subject.budget === 'client'
        ? `Too many requests from this client: try again in ${retryAfterSeconds} seconds.`
        : subject.budget === 'registration'
          ? `Too many client registrations from your network: try again in ${retryAfterSeconds} seconds.`
          : `API rate limit exceeded${subject.budget === 'address' ? ' for your address (authenticate with a token for a budget of your own)' : ''}: ` +
            `this request costs ${state.cost} of ${state.limit} points per window, ${state.remaining} remain; try again in ${retryAfterSeconds} seconds.`,
    );
    this.name = 'RateLimitError';
  }
}

/** Whole seconds from `now` (ms since the epoch, the Clock's) until the window ends, at least 1. */
export function retryAfterSeconds(state: RateLimitState, now: number): number {
  return Math.max(1, Math.ceil((state.resetAt - now) / 1000));
}
