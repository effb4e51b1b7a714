/** Seconds a client is told to wait (`Retry-After`) when the database cannot be reached. */
export const RETRY_AFTER_SECONDS = 5;

// Node's socket errors when the server is down, restarting or unreachable.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

// SQLSTATEs that say the server cannot serve now, not that the statement is wrong: class 08
// (connection exception), 57P01–57P03 (shutting down, crashed, starting up), 53300 (too many connections),
// 57014 (cancelled: statement_timeout, the only cancellation Agora asks for), 25P03 (the server ended a
// transaction left idle past idle_in_transaction_session_timeout).
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[1-3]|53300|57014|25P03)$/;

// node-postgres and pg-pool say these in plain text, without a code.
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Connection ended unexpectedly',
  // pg's query_timeout: no answer from the server in time (the connection is discarded: see BoundedClient).
  'Query read timeout',
];

/**
 * A statement waited longer than DATABASE_POOL_WAIT_TIMEOUT_MS for a pooled connection: the database
 * is slow or the pool is saturated, and the request is shed (503 with `Retry-After`) rather than queued.
 */
export class PoolWaitTimeoutError extends Error {
  constructor(readonly waitedMs: number) {
    super(`No database connection free within ${waitedMs} ms`);
    this.name = 'PoolWaitTimeoutError';
  }
}

/**
 * Whether an error means the database cannot be reached right now (a fault to answer with 503 and
 * `Retry-After`), as opposed to a statement that failed (a bug, 500). Looks through TypeORM's
 * `driverError`, `cause` and graphql-js's `thrownValue` wrappers.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    if (current instanceof PoolWaitTimeoutError) return true;
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((m) => message.startsWith(m))) return true;
    // TypeORM's wrapper, Error causes, and graphql-js's wrapper of a value that is not an Error.
    const next = current as { driverError?: unknown; cause?: unknown; thrownValue?: unknown };
    current = next.driverError ?? next.cause ?? next.thrownValue;
  }
  return false;
}
