import { JOB_SCHEMA } from '../database/migrations/1796200000002-job-queue.js';

/** A job as an operator sees it (`jobs:list`, `jobs:show`). */
export interface JobRecord {
  id: string;
  queue: string;
  state: string;
  /** Attempts made so far (a failed job: all of them). */
  attempts: number;
  /** Attempts it may have in all. */
  maxAttempts: number;
  createdAt: Date;
  /** When it is (or was) due. */
  dueAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** The last failure's message, if any. */
  lastError: string | null;
}

export type JobListState = 'failed' | 'waiting' | 'scheduled' | 'active' | 'completed';

const STATE_FILTERS: Record<JobListState, string> = {
  failed: `state = 'failed'`,
  waiting: `state IN ('created', 'retry') AND start_after <= now()`,
  scheduled: `state IN ('created', 'retry') AND start_after > now()`,
  active: `state = 'active'`,
  completed: `state = 'completed'`,
};

const COLUMNS = `id, name, state::text AS state, retry_count, retry_limit, created_on, start_after, started_on, completed_on, output`;

type Query = (text: string, values: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

/** The jobs of one state, newest first, from pg-boss's table (completed jobs stay there an hour, then go to its archive). */
export async function listJobs(query: Query, state: JobListState, queue: string | undefined, limit: number): Promise<JobRecord[]> {
  const { rows } = await query(
    `SELECT ${COLUMNS} FROM ${JOB_SCHEMA}.job WHERE ${STATE_FILTERS[state]} AND ($1::text IS NULL OR name = $1)
      ORDER BY created_on DESC, id LIMIT $2`,
    [queue ?? null, limit],
  );
  return rows.map(toRecord);
}

/** One job with its data, from the table or the archive. */
export async function findJob(query: Query, id: string): Promise<(JobRecord & { data: unknown; archived: boolean }) | null> {
  const { rows } = await query(
    `SELECT ${COLUMNS}, data, false AS archived FROM ${JOB_SCHEMA}.job WHERE id = $1
     UNION ALL SELECT ${COLUMNS}, data, true AS archived FROM ${JOB_SCHEMA}.archive WHERE id = $1 LIMIT 1`,
    [id],
  );
  const row = rows[0];
  return row ? { ...toRecord(row), data: row.data, archived: row.archived as boolean } : null;
}

function toRecord(row: Record<string, unknown>): JobRecord {
  const state = row.state as string;
  const retries = Number(row.retry_count);
  const output = row.output as { message?: unknown } | null;
  return {
    id: row.id as string,
    queue: row.name as string,
    state,
    // pg-boss counts retries, and counts the attempt that failed last among them only once it failed.
    attempts: retries + (state === 'created' ? 0 : state === 'retry' ? 0 : 1),
    maxAttempts: Number(row.retry_limit) + 1,
    createdAt: row.created_on as Date,
    dueAt: row.start_after as Date,
    startedAt: (row.started_on as Date | null) ?? null,
    finishedAt: (row.completed_on as Date | null) ?? null,
    lastError: output && typeof output.message === 'string' ? output.message : null,
  };
}
