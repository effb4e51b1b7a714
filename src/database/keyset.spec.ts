import { checkPageRequest, decodeCursor, encodeCursor, fetchPage, PaginationError, SortKey } from './keyset.js';

const KEY: SortKey = {
  columns: [
    { sql: 'e.starts_at', type: 'timestamptz' },
    { sql: 'e.id', type: 'uuid' },
  ],
  direction: 'ASC',
};
const ID = '0b6f7c3e-2f64-4a0b-9d1e-3f4a5b6c7d8e';

describe('keyset pagination', () => {
  it('round-trips a cursor', () => {
    const cursor = encodeCursor(['2031-03-01 00:00:00+00', ID]);
    expect(decodeCursor(cursor, KEY, 'after')).toEqual(['2031-03-01 00:00:00+00', ID]);
  });

  it.each([
    ['not base64 JSON', 'not-a-cursor'],
    ['the wrong number of values', encodeCursor([ID])],
    ['a value of the wrong type', encodeCursor(['yesterday', ID])],
    ['an id that is not a uuid', encodeCursor(['2031-03-01 00:00:00+00', "x' OR 1=1"])],
    // Shaped right, but not a time PostgreSQL accepts: these used to reach the database and fail there.
    ['a month 13', encodeCursor(['2031-13-01 00:00:00+00', ID])],
    ['a 31 February', encodeCursor(['2031-02-31 00:00:00+00', ID])],
    ['an hour 25', encodeCursor(['2031-03-01 25:00:00+00', ID])],
    ['a year 0', encodeCursor(['0000-03-01 00:00:00+00', ID])],
    ['an offset of 99 hours', encodeCursor(['2031-03-01 00:00:00+99', ID])],
  ])('refuses a cursor with %s', (_label, cursor) => {
    expect(() => decodeCursor(cursor, KEY, 'after')).toThrow(PaginationError);
  });

  it.each([
    ['a bigint beyond 64 bits', { columns: [{ sql: 'x', type: 'bigint' as const }], direction: 'ASC' as const }, ['9223372036854775808']],
    ['text with a NUL', { columns: [{ sql: 'x', type: 'text' as const }], direction: 'ASC' as const }, ['a\u0000b']],
  ])('refuses a cursor holding %s', (_label, key, values) => {
    expect(() => decodeCursor(encodeCursor(values), key, 'after')).toThrow(PaginationError);
  });

  it('accepts the values PostgreSQL gives back for each type', () => {
    const key: SortKey = {
      columns: [
        { sql: 'a', type: 'timestamptz' },
        { sql: 'b', type: 'bigint' },
        { sql: 'c', type: 'text' },
      ],
      direction: 'ASC',
    };
    const values = ['2024-02-29 23:59:59.123456+05:30', '-9223372036854775808', 'Zoë'];
    expect(decodeCursor(encodeCursor(values), key, 'after')).toEqual(values);
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
      async (sql, params) => {
        calls.push({ sql, params });
        return rows;
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
  });

  it('reads backward in reverse order and returns the rows in list order', async () => {
    let sql = '';
    const page = await fetchPage(
      async (text) => {
        sql = text;
        return [3, 2].map((n) => ({ n, __k0: `2031-03-0${n} 00:00:00+00`, __k1: ID }));
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
