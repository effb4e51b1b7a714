import { localTime } from './demo-seed.js';

describe('localTime', () => {
  it('is the wall-clock time in the zone, on the day the instant falls on there', () => {
    expect(localTime(new Date('2026-01-15T12:00:00Z'), '18:30', 'Asia/Tokyo').toISOString()).toBe('2026-01-15T09:30:00.000Z');
    // 23:00 UTC is already the next day in Tokyo.
    expect(localTime(new Date('2026-01-15T23:00:00Z'), '09:00', 'Asia/Tokyo').toISOString()).toBe('2026-01-16T00:00:00.000Z');
    expect(localTime(new Date('2026-01-15T02:00:00Z'), '09:00', 'America/New_York').toISOString()).toBe('2026-01-14T14:00:00.000Z');
  });

  it('takes the offset of the day itself across daylight saving changes', () => {
    // Paris moves to summer time on 29 March 2026 at 02:00.
    expect(localTime(new Date('2026-03-28T12:00:00Z'), '09:00', 'Europe/Paris').toISOString()).toBe('2026-03-28T08:00:00.000Z');
    expect(localTime(new Date('2026-03-29T12:00:00Z'), '09:00', 'Europe/Paris').toISOString()).toBe('2026-03-29T07:00:00.000Z');
    // Sydney leaves summer time on 5 April 2026.
    expect(localTime(new Date('2026-04-05T00:00:00Z'), '08:00', 'Australia/Sydney').toISOString()).toBe('2026-04-04T22:00:00.000Z');
  });
});
