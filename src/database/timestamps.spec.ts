import fc from 'fast-check';
import pg from 'pg';
import { parseTimestamptz, TIMESTAMPTZ_OID } from './timestamps.js';

const library = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => Date | number | null;

const same = (text: string) => {
  const ours = parseTimestamptz(text);
  const theirs = library(text);
  expect([text, ours instanceof Date ? ours.getTime() : ours]).toEqual([text, theirs instanceof Date ? theirs.getTime() : theirs]);
};

const pad = (value: number, width: number) => String(value).padStart(width, '0');

/** Text as PostgreSQL writes a timestamptz: any year it accepts, 0–6 fraction digits, any offset form. */
const written = fc
  .record({
    year: fc.integer({ min: 1, max: 294_276 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 31 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    fraction: fc.option(fc.stringMatching(/^[0-9]{1,6}$/), { nil: undefined }),
    sign: fc.constantFrom('+', '-'),
    offsetHours: fc.integer({ min: 0, max: 15 }),
    offsetMinutes: fc.option(fc.integer({ min: 0, max: 59 }), { nil: undefined }),
    offsetSeconds: fc.option(fc.integer({ min: 0, max: 59 }), { nil: undefined }),
    bc: fc.boolean(),
  })
  .map((t) => {
    const offset =
      `${t.sign}${pad(t.offsetHours, 2)}` +
      (t.offsetMinutes === undefined ? '' : `:${pad(t.offsetMinutes, 2)}`) +
      (t.offsetMinutes === undefined || t.offsetSeconds === undefined ? '' : `:${pad(t.offsetSeconds, 2)}`);
    const time = `${pad(t.hour, 2)}:${pad(t.minute, 2)}:${pad(t.second, 2)}${t.fraction === undefined ? '' : `.${t.fraction}`}`;
    return `${pad(t.year, 4)}-${pad(t.month, 2)}-${pad(t.day, 2)} ${time}${offset}${t.bc ? ' BC' : ''}`;
  });

describe('parseTimestamptz', () => {
  it.each([
    '2026-11-23 03:32:15.123456+00',
    '2026-11-23 03:32:15+00',
    '2026-11-23 03:32:15.57+00',
    '2026-11-23 03:32:15.1+05:30',
    '2026-11-23 03:32:15.999999-03:00:12',
    '1970-01-01 00:00:00+00',
    '0099-01-01 00:00:00+00',
    '0044-03-15 12:00:00+00 BC',
    '12345-01-01 00:00:00+00',
    'infinity',
    '-infinity',
  ])('reads %s as node-postgres does', same);

  it('reads every value PostgreSQL can write as node-postgres does', () => {
    fc.assert(fc.property(written, same), { numRuns: 20_000 });
  });

  it('agrees with node-postgres on malformed text too', () => {
    fc.assert(
      fc.property(
        written.chain((text) => fc.tuple(fc.constant(text), fc.nat(text.length), fc.string({ maxLength: 3 }))),
        ([text, at, noise]) => same(text.slice(0, at) + noise + text.slice(at + noise.length)),
      ),
      { numRuns: 20_000 },
    );
  });
});
