/** Rows one purge statement deletes at most: each statement stays far inside the statement timeout. */
export const PURGE_BATCH_SIZE = 5_000;

/** Runs one SQL statement with positional parameters and answers its rows (a repository's or a pool's `query`). */
export type RunStatement = (text: string, values: unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * Deletes the rows of `table` that match `condition` (which names the row `t`), in statements of at most
 * `batchSize` rows each, until one deletes fewer; answers how many were deleted. A backlog of millions of
 * expired rows is then worked through in short statements that each hold their row locks briefly and
 * stay inside DATABASE_STATEMENT_TIMEOUT_SECONDS, where one DELETE of them all would be cancelled by the
 * timeout on every run, so the backlog would only grow. `condition` is checked again by the DELETE
 * itself, so a row that changed since the batch was chosen is only deleted if it still matches.
 */
export async function purgeInBatches(
  run: RunStatement,
  table: string,
  condition: string,
  values: unknown[],
  batchSize = PURGE_BATCH_SIZE,
): Promise<number> {
  const limit = `$${values.length + 1}`;
  const text = `WITH purged AS (
      DELETE FROM ${table} t
       WHERE t.ctid = ANY (ARRAY (SELECT t.ctid FROM ${table} t WHERE ${condition} LIMIT ${limit}))
         AND ${condition}
      RETURNING 1)
    SELECT count(*)::int AS purged FROM purged`;
  let total = 0;
  for (;;) {
    const [row] = await run(text, [...values, batchSize]);
    const purged = Number(row?.purged ?? 0);
    total += purged;
    if (purged < batchSize) return total;
  }
}
