/** Whether this process runs jobs (the server's processes) or only enqueues them (the CLI). */
export const JOBS_WORK = Symbol('JOBS_WORK');
