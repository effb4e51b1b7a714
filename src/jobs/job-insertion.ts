/** pg-boss's insert of one job, to run inside a statement of the caller's (`JobQueue.insertion`). */
export interface JobInsertion {
  /** The INSERT … RETURNING id, its parameters numbered from the caller's `firstParameter`. */
  sql: string;
  /** Its parameters' values, in order, from `firstParameter` on. */
  values: unknown[];
}

// pg-boss 10's insertJob: `$3::jsonb as data` is the job's data, the only parameter that differs between jobs of a kind.
const DATA = /\$3::jsonb as data/;
// Its one-row subquery joined to the queue's row, just before ON CONFLICT: where the condition on the data goes.
const JOIN = /(\)\s*j\s+JOIN\s+\S+\.queue\s+q\s+ON\s+j\.name\s*=\s*q\.name)(\s+ON CONFLICT DO NOTHING)/;

/**
 * pg-boss's insert statement with its data parameter ($3) replaced by `data` and the other parameters
 * renumbered from `first` on (so it can sit beside the caller's own). When `data` comes out NULL it
 * inserts no job: PostgreSQL runs a data-modifying CTE whatever the rest of the statement does, so a
 * statement that wrote nothing for the job to be about still runs its insert, and a job without data
 * is nothing to do. Refuses a text it does not recognise (another pg-boss version) rather than guess.
 */
export function jobInsertion(captured: { text: string; values: unknown[] }, first: number, data: string): JobInsertion {
  if (!DATA.test(captured.text) || !JOIN.test(captured.text) || !/^\s*INSERT INTO /.test(captured.text))
    throw new Error("JobQueue.insertion: pg-boss's insert is not the one this was written for (pg-boss 10)");
  const sql = captured.text
    .replace(DATA, 'JOB_DATA as data')
    .replace(JOIN, '$1 WHERE j.data IS NOT NULL$2')
    .replace(/\$(\d+)/g, (_, n: string) => {
      const index = Number(n);
      return `$${(index < 3 ? index : index - 1) + first - 1}`;
    })
    .replace('JOB_DATA', () => `(${data})::jsonb`);
  return { sql, values: captured.values.filter((_, i) => i !== 2) };
}
