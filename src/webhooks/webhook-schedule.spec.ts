import { AUTOMATIC_ATTEMPTS, failingTooLong, failureStreakSince, retryDelayMs, RETRY_DELAYS_MS } from './webhook-schedule.js';

describe('the retry schedule', () => {
  it('waits 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h and 24 h, then gives up after the ninth attempt', () => {
    const minutes = Array.from({ length: AUTOMATIC_ATTEMPTS }, (_, i) => retryDelayMs(i + 1)).map((ms) =>
      ms === null ? null : ms / 60_000,
    );
    expect(minutes).toEqual([1, 5, 30, 120, 360, 720, 1440, 1440, null]);
  });

  it('spans about three days from the first attempt to the last', () => {
    let total = 0;
    for (let failed = 1; retryDelayMs(failed) !== null; failed++) total += retryDelayMs(failed)!;
    expect(total / 3600_000).toBeCloseTo(68.6, 1);
  });

  it('disables an endpoint after 72 hours of failures, not before', () => {
    const since = new Date('2026-01-01T00:00:00Z');
    expect(failingTooLong(null, new Date('2026-02-01T00:00:00Z'))).toBe(false);
    expect(failingTooLong(since, new Date('2026-01-03T23:59:59Z'))).toBe(false);
    expect(failingTooLong(since, new Date('2026-01-04T00:00:00Z'))).toBe(true);
  });
});

describe('the failure streak', () => {
  const HOUR = 3600_000;
  const at = (hours: number) => new Date(Date.UTC(2026, 10, 1) + hours * HOUR);

  it('keeps its start through a delivery retried on schedule, so nine failed attempts and more reach 72 hours', () => {
    let since: Date | null = null;
    let last: Date | null = null;
    let t = 0;
    for (const delay of [0, ...RETRY_DELAYS_MS, 4 * HOUR]) {
      t += delay / HOUR + 0.01; // each attempt a little after it was due
      since = failureStreakSince(since, last, at(t));
      last = at(t);
    }
    expect(since).toEqual(at(0.01));
    expect(failingTooLong(since, at(t))).toBe(true);
  });

  it('starts again with a failure more than 25 hours after the previous one: quiet days are not failing days', () => {
    expect(failureStreakSince(at(0), at(1), at(26.5))).toEqual(at(26.5));
    expect(failureStreakSince(at(0), at(1), at(25.9))).toEqual(at(0));
    expect(failingTooLong(failureStreakSince(at(0), at(0), at(96)), at(96))).toBe(false);
  });

  it('starts with the first failure after a success (no streak stored)', () => {
    expect(failureStreakSince(null, at(1), at(2))).toEqual(at(2));
    expect(failureStreakSince(null, null, at(2))).toEqual(at(2));
  });
});
