import { WindowCounters } from './window-counters.js';

describe('WindowCounters', () => {
  it('adds a charge only when it fits, and starts a fresh window when one ends', () => {
    const counters = new WindowCounters(1000, 10);
    expect(counters.charge('a', 3, 5, 0)).toEqual({ used: 3, resetAt: 1000, refused: false });
    expect(counters.charge('a', 3, 5, 10)).toEqual({ used: 3, resetAt: 1000, refused: true });
    expect(counters.charge('a', 2, 5, 20)).toEqual({ used: 5, resetAt: 1000, refused: false });
    expect(counters.charge('b', 1, 5, 20)).toEqual({ used: 1, resetAt: 1020, refused: false });
    expect(counters.charge('a', 1, 5, 1000)).toEqual({ used: 1, resetAt: 2000, refused: false });
  });

  it('holds at most maxKeys windows, dropping expired ones first and then the oldest', () => {
    const counters = new WindowCounters(1000, 3);
    for (const key of ['a', 'b', 'c']) counters.charge(key, 1, 5, 0);
    counters.charge('d', 1, 5, 10); // full: the oldest running window ("a") goes
    expect(counters.size).toBe(3);
    expect(counters.evicted).toBe(1);
    expect(counters.charge('a', 1, 5, 20)).toMatchObject({ used: 1 });
    // After the windows end, new ones sweep the expired from the front without evicting running ones.
    const later = new WindowCounters(1000, 1000);
    for (let i = 0; i < 500; i++) later.charge(`old${i}`, 1, 5, 0);
    for (let i = 0; i < 500; i++) later.charge(`new${i}`, 1, 5, 2000);
    expect(later.size).toBe(500);
    expect(later.evicted).toBe(0);
  });

  it('stays bounded under a flood of distinct callers', () => {
    const counters = new WindowCounters(3_600_000, 1000);
    for (let i = 0; i < 50_000; i++) counters.charge(`flood${i}`, 1, 5, i);
    expect(counters.size).toBe(1000);
  });
});
