import type { PageSource, QueryRunnerFn } from './keyset.js';

/**
 * Numbered pages (`page`, `per_page`) for the legacy REST API, whose callers expect them with a total.
 * The GraphQL API pages by keyset instead; this is OFFSET, and costs more the deeper the page.
 */
export interface NumberedPage<T> {
  items: T[];
  total: number;
  page: number;
  perPage: number;
}

export async function fetchNumberedPage<T>(
  run: QueryRunnerFn,
  source: PageSource,
  orderBy: string,
  page: number,
  perPage: number,
  map: (row: Record<string, unknown>) => T,
): Promise<NumberedPage<T>> {
  const where = source.where.length ? `WHERE ${source.where.map((w) => `(${w})`).join(' AND ')}` : '';
  const n = source.params.length;
  const rows = await run(
    `SELECT ${source.select}, count(*) OVER () AS __total FROM ${source.from} ${where} ORDER BY ${orderBy} LIMIT $${n + 1} OFFSET $${n + 2}`,
    [...source.params, perPage, (page - 1) * perPage],
  );
  let total = rows.length ? Number(rows[0]!.__total) : 0;
  if (!rows.length && page > 1) {
    // Past the last page the window count has no row to ride on.
    const [count] = await run(`SELECT count(*)::int AS n FROM ${source.from} ${where}`, source.params);
    total = Number(count!.n);
  }
  return { items: rows.map(map), total, page, perPage };
}
