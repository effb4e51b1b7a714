import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { AppConfig } from '../config/config.schema.js';
import { DatabaseConnection, DatabaseTarget, redactUrl } from './database-target.js';

/** A database setting that cannot work as configured: said in one line at start-up, never retried. */
export class DatabaseSettingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseSettingError';
  }
}

/** The channel of the start-up notification that shows DATABASE_DIRECT_URL and DATABASE_URL reach one database. */
export const POOLING_PROBE_CHANNEL = 'agora_pooling_probe';
/** How long a notification sent through DATABASE_URL may take to be heard on DATABASE_DIRECT_URL. */
const SAME_DATABASE_WAIT_MS = 5_000;
/** Statements of the check: each is answered in milliseconds by any database that serves at all. */
const PROBE_QUERY_TIMEOUT_MS = 5_000;
/** Rounds of the two-connection test: each gives a transaction-mode pooler one more chance to show itself. */
const SHARING_ROUNDS = 3;

/**
 * Checks at start-up that the database connections are what DATABASE_POOLING says they are, since a
 * mismatch does not fail loudly: named statements meet sessions that do not know them, a `LISTEN` is
 * dropped while queries still answer, the migration lock is taken on one session and released on
 * another. Refuses (DatabaseSettingError) what cannot work, and returns warnings for what works with
 * less protection than configured.
 *
 * - DATABASE_URL must run a transaction: a pooler in statement mode cannot, and is not supported.
 * - With DATABASE_POOLING=session, two connections open at once must not be served by one server
 *   process (`pg_backend_pid()`), and one connection must keep its server process: otherwise DATABASE_URL
 *   is a pooler in transaction mode. A busy pooler may hand out other sessions by chance, so passing
 *   proves nothing; failing is proof.
 * - DATABASE_DIRECT_URL, when set, gets the same test (it carries LISTEN and the migration lock), and must
 *   hear a notification sent through DATABASE_URL: the two reach one database.
 * - With DATABASE_POOLING=transaction, the server-side bounds are the role's: warned of when absent.
 */
export async function checkPooling(config: AppConfig, target: DatabaseTarget): Promise<string[]> {
  if (target.kind !== 'server') return [];
  const url = target.connection.url!;
  const directUrl = config.database.directUrl;
  const open = (connection: DatabaseConnection) => connect(config, connection.url!);

  await withClients([open(target.connection)], async ([client]) => {
    try {
      await client.query('BEGIN');
      await client.query('SELECT 1');
      await client.query('COMMIT');
    } catch (err) {
      // PgBouncer's words; anything else (a timeout, a lost connection) is the database's own failure.
      if (!/statement pooling mode/i.test((err as Error).message)) throw err;
      throw new DatabaseSettingError(
        `DATABASE_URL (${redactUrl(url)}) cannot run a transaction (${(err as Error).message}): a pooler in statement mode is not ` +
          'supported; point DATABASE_URL at the server or at a pool in session or transaction mode',
      );
    }
  });

  if (config.database.pooling === 'session' && (await sharesSessions(() => open(target.connection)))) {
    throw new DatabaseSettingError(
      `DATABASE_URL (${redactUrl(url)}) goes through a pooler in transaction mode (two connections shared one server session): ` +
        'set DATABASE_POOLING=transaction and DATABASE_DIRECT_URL to a direct or session-mode connection to the same database',
    );
  }
  if (directUrl === undefined) return [];

  if (await sharesSessions(() => connect(config, directUrl))) {
    throw new DatabaseSettingError(
      `DATABASE_DIRECT_URL (${redactUrl(directUrl)}) goes through a pooler in transaction mode: it must give each connection ` +
        'its own session (the server itself, or a session-mode pool), for LISTEN and the migration lock',
    );
  }
  if (!(await hearsOneAnother(config, directUrl, url))) {
    throw new DatabaseSettingError(
      `DATABASE_DIRECT_URL (${redactUrl(directUrl)}) and DATABASE_URL (${redactUrl(url)}) do not reach the same database ` +
        `(a notification sent through one was not heard on the other within ${SAME_DATABASE_WAIT_MS / 1000} s)`,
    );
  }
  return config.database.pooling === 'transaction' ? await roleBounds(config, open(target.connection)) : [];
}

/** Whether two connections made by `open` show a server session shared between them, or changing under one. */
async function sharesSessions(open: () => Promise<pg.Client>): Promise<boolean> {
  return withClients([open(), open()], async ([first, second]) => {
    for (let round = 0; round < SHARING_ROUNDS; round++) {
      const a = await backendPid(first);
      const b = await backendPid(second);
      const again = await backendPid(first);
      if (a === b || a !== again) return true;
    }
    return false;
  });
}

async function hearsOneAnother(config: AppConfig, listenUrl: string, notifyUrl: string): Promise<boolean> {
  const payload = randomUUID();
  return withClients([connect(config, listenUrl), connect(config, notifyUrl)], async ([listener, notifier]) => {
    let timer: NodeJS.Timeout | undefined;
    const heard = new Promise<boolean>((resolve) => {
      listener.on('notification', (message) => {
        if (message.channel === POOLING_PROBE_CHANNEL && message.payload === payload) resolve(true);
      });
      timer = setTimeout(() => resolve(false), SAME_DATABASE_WAIT_MS);
    });
    try {
      await listener.query(`LISTEN ${POOLING_PROBE_CHANNEL}`);
      await notifier.query('SELECT pg_notify($1, $2)', [POOLING_PROBE_CHANNEL, payload]);
      return await heard;
    } finally {
      clearTimeout(timer);
    }
  });
}

/**
 * Behind a pooler in transaction mode this process sets no statement bounds of its own (no `SET`): the
 * role's settings are what bounds a statement on the server. One warning per bound that is off there
 * while configured here.
 */
async function roleBounds(config: AppConfig, opening: Promise<pg.Client>): Promise<string[]> {
  return withClients([opening], async ([client]) => {
    const { rows } = await client.query<{ statement: string; idle: string; role: string }>(
      "SELECT current_setting('statement_timeout') AS statement, current_setting('idle_in_transaction_session_timeout') AS idle, current_user AS role",
    );
    const { statement, idle, role } = rows[0]!;
    const warnings: string[] = [];
    const { statementTimeoutMs, idleInTransactionTimeoutMs } = config.database;
    const quoted = client.escapeIdentifier(role);
    if (statementTimeoutMs > 0 && statement === '0') {
      warnings.push(
        `DATABASE_POOLING=transaction: statements are not bounded on the server (statement_timeout is 0 for role ${role}, and no SET is ` +
          `sent through a transaction pooler): run ALTER ROLE ${quoted} SET statement_timeout = '${statementTimeoutMs / 1000}s'`,
      );
    }
    if (idleInTransactionTimeoutMs > 0 && idle === '0') {
      warnings.push(
        `DATABASE_POOLING=transaction: idle transactions are not bounded on the server (idle_in_transaction_session_timeout is 0 for role ${role}): ` +
          `run ALTER ROLE ${quoted} SET idle_in_transaction_session_timeout = '${idleInTransactionTimeoutMs / 1000}s'`,
      );
    }
    return warnings;
  });
}

async function backendPid(client: pg.Client): Promise<number> {
  return (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
}

async function connect(config: AppConfig, url: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    application_name: 'agora-pooling-check',
    connectionTimeoutMillis: config.database.connectTimeoutMs,
    query_timeout: PROBE_QUERY_TIMEOUT_MS,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
  return client;
}

/** Runs `use` with the connected clients, and ends every one that connected, whatever happens. */
async function withClients<T>(opening: Promise<pg.Client>[], use: (clients: pg.Client[]) => Promise<T>): Promise<T> {
  const settled = await Promise.allSettled(opening);
  const clients = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  try {
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    return await use(clients);
  } finally {
    await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
  }
}
