import pg from 'pg';

/** PostgreSQL's type OID of `timestamptz`. */
export const TIMESTAMPTZ_OID = 1184;

const parseWithLibrary = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => Date | number | null;

const ZERO = 48;

/** The number written by the digits text[start, end), or -1 if any is not a digit. */
function digits(text: string, start: number, end: number): number {
  let value = 0;
  for (let i = start; i < end; i++) {
    const d = text.charCodeAt(i) - ZERO;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

/**
 * `timestamptz` as PostgreSQL writes it (DateStyle ISO, which the driver asks for), read without
 * regular expressions: `2026-11-23 03:32:15.123456+00`, `… +05:30`, `… -03:00:12`. A page of events holds
 * hundreds of them, and node-postgres's parser (postgres-date: three regular expressions, their match
 * arrays and substrings per value) was a tenth of the listing's allocations. Anything else (years
 * before 1000 or past 9999, BC, infinity) goes to that parser, and the result is always the same as its
 * own, to the millisecond (`timestamps.spec.ts` checks both on generated values).
 */
export function parseTimestamptz(text: string): Date | number | null {
  const n = text.length;
  if (
    n < 22 ||
    text.charCodeAt(4) !== 45 || // -
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 32 || // space
    text.charCodeAt(13) !== 58 || // :
    text.charCodeAt(16) !== 58
  ) {
    return parseWithLibrary(text);
  }
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  if (year < 1000 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return parseWithLibrary(text);

  let i = 19;
  let ms = 0;
  if (text.charCodeAt(i) === 46) {
    // .fraction: as the library computes it (1000 × the fraction as a double), so the same millisecond.
    const start = ++i;
    while (i < n && text.charCodeAt(i) >= ZERO && text.charCodeAt(i) <= ZERO + 9) i++;
    if (i === start || i - start > 9) return parseWithLibrary(text);
    ms = 1000 * (digits(text, start, i) / 10 ** (i - start));
  }

  // The offset: +HH, +HH:MM or +HH:MM:SS, and nothing after it.
  const sign = text.charCodeAt(i);
  if ((sign !== 43 && sign !== 45) || !(n === i + 3 || n === i + 6 || n === i + 9)) return parseWithLibrary(text);
  const hours = digits(text, i + 1, i + 3);
  const minutes = n > i + 3 && text.charCodeAt(i + 3) === 58 ? digits(text, i + 4, i + 6) : n > i + 3 ? -1 : 0;
  const seconds = n > i + 6 && text.charCodeAt(i + 6) === 58 ? digits(text, i + 7, i + 9) : n > i + 6 ? -1 : 0;
  if (hours < 0 || minutes < 0 || seconds < 0) return parseWithLibrary(text);
  const offsetMs = (sign === 45 ? -1 : 1) * (hours * 3600 + minutes * 60 + seconds) * 1000;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMs);
}

/** node-postgres's type parsers, but timestamptz read by parseTimestamptz: the pool's `types`. */
export const driverTypes = {
  getTypeParser(oid: number, format: 'text' | 'binary' = 'text'): unknown {
    return oid === TIMESTAMPTZ_OID && format === 'text' ? parseTimestamptz : pg.types.getTypeParser(oid, format);
  },
};
