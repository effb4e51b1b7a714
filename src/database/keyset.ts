import { DomainError } from '../errors/domain-error.js';
import { unstorableText } from '../errors/text-input.js';
import type { CursorCodec } from './cursor-codec.js';

/**
 * Keyset ("seek") pagination: a page starts after the sort key of the last item seen, so every page
 * costs an index range scan whatever its depth, and inserts never shift or repeat items. No OFFSET.
 */

/** One column of a sort key. The last column of a key must be unique (an id). */
export interface KeyColumn {
  /** SQL expression, such as `e.starts_at`. */
  sql: string;
  /** Type the cursor's text value is cast back to. */
  type: 'timestamptz' | 'uuid' | 'bigint' | 'text';
}

export interface SortKey {
  /**
   * The list this order pages, by its schema coordinate (`Query.events`, `User.registrations`…): a
   * cursor opens only on the list, and in the direction, that issued it.
   */
  list: string;
  columns: KeyColumn[];
  direction: 'ASC' | 'DESC';
}

/** Which slice of a list to read: `first` after a cursor, or `last` before one. */
export interface PageRequest {
  first?: number;
  last?: number;
  after?: string;
  before?: string;
}

export interface Page<T> {
  items: { readonly node: T; readonly cursor: string }[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

/** The part of a query a page is cut from: `SELECT <select> FROM <from> WHERE <where…>`. */
export interface PageSource {
  select: string;
  from: string;
  where: string[];
  params: unknown[];
}

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

export class PaginationError extends DomainError {
  constructor(code: 'INVALID_CURSOR' | 'INVALID_PAGE_SIZE', message: string, field: string) {
    super('invalid', code, message, field);
  }
}

export type QueryRunnerFn = (sql: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

/** What reads pages: a way to run SQL, and the codec that seals and opens cursors. */
export interface PageReader {
  run: QueryRunnerFn;
  cursors: CursorCodec;
}

/** Checks the numbers of a page request: a size of 1 to 100, not both `first` and `last`. */
export function checkPageRequest(request: PageRequest): { size: number; backward: boolean } {
  if (request.first != null && request.last != null) {
    throw new PaginationError('INVALID_PAGE_SIZE', 'Pass either first or last, not both.', 'first');
  }
  const backward = request.last != null;
  const size = request.last ?? request.first ?? DEFAULT_PAGE_SIZE;
  const field = backward ? 'last' : 'first';
  if (!Number.isInteger(size) || size < 0 || size > MAX_PAGE_SIZE) {
    throw new PaginationError('INVALID_PAGE_SIZE', `${field} must be between 0 and ${MAX_PAGE_SIZE}.`, field);
  }
  return { size, backward };
}

const binding = (key: SortKey): string => `${key.list} ${key.direction}`;

export function encodeCursor(values: readonly string[], key: SortKey, cursors: CursorCodec): string {
  return cursors.seal(values, binding(key));
}

/**
 * The sort-key values of a cursor: only one this list issued (its HMAC verified, see CursorCodec),
 * and then only values PostgreSQL accepts for their columns, else INVALID_CURSOR.
 */
export function decodeCursor(cursor: string, key: SortKey, field: string, cursors: CursorCodec): string[] {
  const values = cursors.open(cursor, binding(key));
  if (
    !Array.isArray(values) ||
    values.length !== key.columns.length ||
    !values.every((v, i) => typeof v === 'string' && v.length < 100 && validKeyValue(key.columns[i]!.type, v))
  ) {
    throw new PaginationError('INVALID_CURSOR', `${field} is not a cursor of this list.`, field);
  }
  return values as string[];
}

/** A page item whose cursor is sealed on first read: only the cursors a client selects cost an HMAC. */
class PageItem<T> {
  private sealed?: string;

  constructor(
    readonly node: T,
    private readonly values: readonly string[],
    private readonly key: SortKey,
    private readonly cursors: CursorCodec,
  ) {}

  get cursor(): string {
    return (this.sealed ??= encodeCursor(this.values, this.key, this.cursors));
  }
}

/**
 * Whether a cursor's value is one PostgreSQL accepts for its column type. Cursors are verified before
 * this; it stays as a second line (a leaked SECRET_KEY, a value that should not have been sealed), so
 * a bad value is refused here as INVALID_CURSOR and never reaches the database to fail there.
 */
function validKeyValue(type: KeyColumn['type'], value: string): boolean {
  switch (type) {
    case 'uuid':
      return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
    case 'bigint':
      return /^-?\d{1,19}$/.test(value) && BigInt(value) >= -(2n ** 63n) && BigInt(value) < 2n ** 63n;
    case 'timestamptz':
      return validTimestamp(value);
    default:
      return unstorableText(value) === undefined;
  }
}

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(?:([+-])(\d{2})(?::(\d{2}))?|Z)$/;

/** A real calendar date and time of day (no 31 February, no hour 25) with an offset PostgreSQL accepts. */
function validTimestamp(value: string): boolean {
  const match = TIMESTAMP.exec(value);
  if (!match) return false;
  const [year, month, day, hour, minute, second, , , offsetHours, offsetMinutes] = match.slice(1).map((part) => Number(part ?? 0));
  const date = new Date(Date.UTC(year!, month! - 1, day!, hour!, minute!, second!));
  return (
    year! >= 1 &&
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month! - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second &&
    offsetHours! <= 15 &&
    offsetMinutes! <= 59
  );
}

interface BuiltQuery {
  /** SQL of the page's rows, each with `__k0…` (its key as text) and `__rn` when grouped. */
  sql: string;
  params: unknown[];
  size: number;
  backward: boolean;
  after: boolean;
  before: boolean;
}

function buildQuery(
  cursors: CursorCodec,
  source: PageSource,
  key: SortKey,
  request: PageRequest,
  parent?: { sql: string; ids: unknown[] },
): BuiltQuery {
  const { size, backward } = checkPageRequest(request);
  const params = [...source.params];
  const where = [...source.where];
  const param = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const tuple = `(${key.columns.map((c) => c.sql).join(', ')})`;
  const seek = (cursor: string, field: string, beyond: boolean): string => {
    const values = decodeCursor(cursor, key, field, cursors);
    const bound = `(${key.columns.map((c, i) => `${param(values[i])}::${c.type}`).join(', ')})`;
    // "beyond" = further along the list's own order.
    const greater = (key.direction === 'ASC') === beyond;
    return `${tuple} ${greater ? '>' : '<'} ${bound}`;
  };
  if (request.after) where.push(seek(request.after, 'after', true));
  if (request.before) where.push(seek(request.before, 'before', false));
  if (parent) where.push(`${parent.sql} = ANY(${param(parent.ids)})`);

  // Reading backward walks the list in reverse and flips the rows afterwards.
  const scanDirection = backward ? (key.direction === 'ASC' ? 'DESC' : 'ASC') : key.direction;
  const orderBy = key.columns.map((c) => `${c.sql} ${scanDirection}`).join(', ');
  const keyText = key.columns.map((c, i) => `${c.sql}::text AS __k${i}`).join(', ');
  const whereSql = where.length ? `WHERE ${where.map((w) => `(${w})`).join(' AND ')}` : '';
  const limit = param(size + 1);
  const sql = parent
    ? `SELECT * FROM (SELECT ${source.select}, ${keyText}, ${parent.sql} AS __parent,
              row_number() OVER (PARTITION BY ${parent.sql} ORDER BY ${orderBy}) AS __rn
         FROM ${source.from} ${whereSql}) page
        WHERE __rn <= ${limit} ORDER BY __parent, __rn`
    : `SELECT ${source.select}, ${keyText} FROM ${source.from} ${whereSql} ORDER BY ${orderBy} LIMIT ${limit}`;
  return { sql, params, size, backward, after: !!request.after, before: !!request.before };
}

function toPage<T>(
  cursors: CursorCodec,
  rows: Record<string, unknown>[],
  query: BuiltQuery,
  key: SortKey,
  map: (row: Record<string, unknown>) => T,
): Page<T> {
  const more = rows.length > query.size;
  const kept = rows.slice(0, query.size);
  if (query.backward) kept.reverse();
  return {
    items: kept.map(
      (row) =>
        new PageItem(
          map(row),
          key.columns.map((_, i) => String(row[`__k${i}`])),
          key,
          cursors,
        ),
    ),
    // Without a second query, the far side of a cursor is only known to exist, not to be non-empty.
    hasNextPage: query.backward ? query.before : more,
    hasPreviousPage: query.backward ? more : query.after,
  };
}

/** One page of a list. */
export async function fetchPage<T>(
  { run, cursors }: PageReader,
  source: PageSource,
  key: SortKey,
  request: PageRequest,
  map: (row: Record<string, unknown>) => T,
): Promise<Page<T>> {
  const query = buildQuery(cursors, source, key, request);
  if (query.size === 0) return { items: [], hasNextPage: false, hasPreviousPage: false };
  return toPage(cursors, await run(query.sql, query.params), query, key, map);
}

/**
 * The same page of many lists at once (the registrations of each of 50 events): one statement, each
 * list cut by a window function. Returns a page for every parent id, empty when it has no rows.
 */
export async function fetchPagesByParent<T>(
  { run, cursors }: PageReader,
  source: PageSource,
  parentSql: string,
  parentIds: readonly string[],
  key: SortKey,
  request: PageRequest,
  map: (row: Record<string, unknown>) => T,
): Promise<Map<string, Page<T>>> {
  const query = buildQuery(cursors, source, key, request, { sql: parentSql, ids: [...parentIds] });
  const byParent = new Map<string, Record<string, unknown>[]>(parentIds.map((id) => [id, []]));
  if (query.size > 0) {
    for (const row of await run(query.sql, query.params)) byParent.get(String(row.__parent))?.push(row);
  }
  return new Map([...byParent].map(([id, rows]) => [id, toPage(cursors, rows, query, key, map)]));
}
