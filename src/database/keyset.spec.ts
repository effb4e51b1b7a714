import { CursorCodec } from './cursor-codec.js';
import { checkPageRequest, decodeCursor, encodeCursor as encodeFor, fetchPage, PaginationError, SortKey } from './keyset.js';

const cursors = CursorCodec.fromSecret('a-long-random-secret-key-for-tests-0123456789');
const KEY: SortKey = {
  list: 'Query.events',
  columns: [
    { sql: 'e.starts_at', type: 'timestamptz' },
    { sql: 'e.id', type: 'uuid' },
  ],
  direction: 'ASC',
};
const ID = '0b6f7c3e-2f64-4a0b-9d1e-3f4a5b6c7d8e';
const START = '2031-03-01 00:00:00+00';
/** A cursor of KEY's list, sealed with the right key: what the service itself would issue for these values. */
const encodeCursor = (values: string[], key: SortKey = KEY): string => encodeFor(values, key, cursors);
const decode = (cursor: string, key: SortKey = KEY): string[] => decodeCursor(cursor, key, 'after', cursors);

/** A character of base64url other than `c`. */
const flip = (c: string): string => (c === 'A' ? 'B' : 'A');

describe('keyset pagination', () => {
  it('round-trips a cursor, opaquely', () => {
    const cursor = encodeCursor([START, ID]);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursor).not.toContain(ID);
    expect(decode(cursor)).toEqual([START, ID]);
  });

  it('refuses a cursor with any one character changed', () => {
    const cursor = encodeCursor([START, ID]);
    for (let i = 0; i < cursor.length; i++) {
      const changed = cursor.slice(0, i) + flip(cursor[i]!) + cursor.slice(i + 1);
      expect(() => decode(changed)).toThrow(PaginationError);
    }
  });

  it('refuses a cursor truncated, lengthened, or spelled with characters base64url decoding would skip', () => {
    const cursor = encodeCursor([START, ID]);
    for (const changed of [
      cursor.slice(0, -1),
      cursor.slice(0, 20),
      `${cursor}A`,
      `${cursor}=`,
      `${cursor.slice(0, 10)}.${cursor.slice(10)}`,
      '',
    ]) {
      expect(() => decode(changed)).toThrow(PaginationError);
    }
  });

  it('refuses values forged without the key: sealed under another SECRET_KEY, or the old unsigned format', () => {
    const otherKey = CursorCodec.fromSecret('another-deployment-secret-key-0123456789abcdef');
    expect(() => decode(encodeFor([START, ID], KEY, otherKey))).toThrow('after is not a cursor of this list.');
    const unsigned = Buffer.from(JSON.stringify([START, ID]), 'utf8').toString('base64url');
    expect(() => decode(unsigned)).toThrow('after is not a cursor of this list.');
  });

  it('refuses a cursor of another format version', () => {
    const bytes = Buffer.from(encodeCursor([START, ID]), 'base64url');
    bytes[0] = 2;
    expect(() => decode(bytes.toString('base64url'))).toThrow(PaginationError);
  });

  it("refuses another list's cursor, or this list's in the other direction", () => {
    const members: SortKey = { ...KEY, list: 'Organizer.members' };
    expect(() => decode(encodeCursor([START, ID], members))).toThrow(PaginationError);
    expect(() => decode(encodeCursor([START, ID], { ...KEY, direction: 'DESC' }))).toThrow(PaginationError);
  });

  it('refuses a cursor far longer than any it issues before decoding it', () => {
    expect(() => decode('A'.repeat(100_000))).toThrow(PaginationError);
  });

  it.each([
    ['the wrong number of values', encodeCursor([ID])],
    ['a value that is not a string', cursors.seal([START, 42] as unknown as string[], 'Query.events ASC')],
    ['a value of the wrong type', encodeCursor(['yesterday', ID])],
    ['an id that is not a uuid', encodeCursor(['2031-03-01 00:00:00+00', "x' OR 1=1"])],
    // Shaped right, but not a time PostgreSQL accepts: these used to reach the database and fail there.
    ['a month 13', encodeCursor(['2031-13-01 00:00:00+00', ID])],
    ['a 31 February', encodeCursor(['2031-02-31 00:00:00+00', ID])],
    ['an hour 25', encodeCursor(['2031-03-01 25:00:00+00', ID])],
    ['a year 0', encodeCursor(['0000-03-01 00:00:00+00', ID])],
    ['an offset of 99 hours', encodeCursor(['2031-03-01 00:00:00+99', ID])],
  ])('refuses a validly signed cursor with %s (a second line behind the signature)', (_label, cursor) => {
    expect(() => decode(cursor)).toThrow(PaginationError);
  });

  it.each([
    [
      'a bigint beyond 64 bits',
      { list: 'x', columns: [{ sql: 'x', type: 'bigint' as const }], direction: 'ASC' as const },
      ['9223372036854775808'],
    ],
    ['text with a NUL', { list: 'x', columns: [{ sql: 'x', type: 'text' as const }], direction: 'ASC' as const }, ['a\u0000b']],
  ])('refuses a signed cursor holding %s', (_label, key, values) => {
    expect(() => decode(encodeCursor(values, key), key)).toThrow(PaginationError);
  });

  it('accepts the values PostgreSQL gives back for each type', () => {
    const key: SortKey = {
      list: 'x',
      columns: [
        { sql: 'a', type: 'timestamptz' },
        { sql: 'b', type: 'bigint' },
        { sql: 'c', type: 'text' },
      ],
      direction: 'ASC',
    };
    const values = ['2024-02-29 23:59:59.123456+05:30', '-9223372036854775808', 'Zoë'];
    expect(decode(encodeCursor(values, key), key)).toEqual(values);
  });

  it('defaults to 20 items, allows 0 to 100, and not first with last', () => {
    expect(checkPageRequest({})).toEqual({ size: 20, backward: false });
    expect(checkPageRequest({ last: 5 })).toEqual({ size: 5, backward: true });
    expect(() => checkPageRequest({ first: 101 })).toThrow('first must be between 0 and 100.');
    expect(() => checkPageRequest({ last: -1 })).toThrow('last must be between 0 and 100.');
    expect(() => checkPageRequest({ first: 1, last: 1 })).toThrow('Pass either first or last, not both.');
  });

  it('seeks past the cursor with a row comparison and reads one extra row to know whether more follow', async () => {
    const calls: { sql: string; params: unknown[] }[] = [];
    const rows = [1, 2, 3].map((n) => ({ n, __k0: `2031-03-0${n} 00:00:00+00`, __k1: ID }));
    const page = await fetchPage(
      {
        run: async (sql, params) => {
          calls.push({ sql, params });
          return rows;
        },
        cursors,
      },
      { select: 'e.id', from: 'events e', where: ['e.status = $1'], params: ['published'] },
      KEY,
      { first: 2, after: encodeCursor(['2031-03-01 00:00:00+00', ID]) },
      (row) => row.n,
    );
    expect(calls[0]!.sql).toContain('(e.starts_at, e.id) > ($2::timestamptz, $3::uuid)');
    expect(calls[0]!.sql).toContain('ORDER BY e.starts_at ASC, e.id ASC LIMIT $4');
    expect(calls[0]!.params).toEqual(['published', '2031-03-01 00:00:00+00', ID, 3]);
    expect(page.items.map((i) => i.node)).toEqual([1, 2]);
    expect(page.hasNextPage).toBe(true);
    expect(page.hasPreviousPage).toBe(true);
    expect(decode(page.items[1]!.cursor)).toEqual(['2031-03-02 00:00:00+00', ID]);
  });

  it('reads backward in reverse order and returns the rows in list order', async () => {
    let sql = '';
    const page = await fetchPage(
      {
        run: async (text) => {
          sql = text;
          return [3, 2].map((n) => ({ n, __k0: `2031-03-0${n} 00:00:00+00`, __k1: ID }));
        },
        cursors,
      },
      { select: 'e.id', from: 'events e', where: [], params: [] },
      { ...KEY, direction: 'DESC' },
      { last: 2 },
      (row) => row.n,
    );
    expect(sql).toContain('ORDER BY e.starts_at ASC, e.id ASC');
    expect(page.items.map((i) => i.node)).toEqual([2, 3]);
    expect(page).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
  });
});
