import { AppConfig } from '../config/config.schema.js';
import { EmbeddedPostgres } from './embedded-postgres.js';
import type { InProcessNotifications } from './listening-pglite.js';

/** Where the application's PostgreSQL lives and how to let go of it. */
export interface DatabaseTarget {
  kind: 'embedded' | 'server';
  /** Connection settings for `pg`/TypeORM: the pool that serves requests. */
  connection: DatabaseConnection;
  /**
   * Where a connection is its own server session for as long as it is open (DATABASE_DIRECT_URL, else
   * `connection`): LISTEN, the migration lock and the migrations, the CLI.
   */
  sessionConnection: DatabaseConnection;
  /**
   * `transaction` when `connection` is a pooler in transaction mode (DATABASE_POOLING): each statement
   * outside a transaction, and each transaction, may meet another server session, so nothing may
   * outlive one (no named prepared statement, no SET, no LISTEN, no session lock).
   */
  pooling: 'session' | 'transaction';
  /**
   * The embedded database opened by this process: its change notifications, heard in this process before
   * the committing client is answered. Absent on a PostgreSQL server, and in a process (the CLI) that
   * goes through another one's socket.
   */
  notifications?: InProcessNotifications;
  /** Human-readable location, never containing a password. */
  description: string;
  close(): Promise<void>;
}

export interface DatabaseConnection {
  url?: string;
  host?: string;
  port?: number;
  username?: string;
  database?: string;
}

/**
 * Opens the configured database: the PostgreSQL server of DATABASE_URL, or the embedded engine in
 * DATA_DIR. `shareRunning` lets a short-lived process (the CLI) use the socket of a server that already
 * has the embedded database open instead of failing on its lock.
 */
export async function openDatabaseTarget(config: AppConfig, options: { shareRunning?: boolean } = {}): Promise<DatabaseTarget> {
  const { url, directUrl, pooling, dataDir, poolSize } = config.database;
  if (url) {
    return {
      kind: 'server',
      connection: { url },
      sessionConnection: { url: directUrl ?? url },
      pooling,
      description: redactUrl(url),
      close: async () => undefined,
    };
  }
  if (options.shareRunning) {
    const endpoint = await EmbeddedPostgres.runningEndpoint(dataDir);
    if (endpoint) {
      const connection = { ...endpoint, username: 'postgres', database: 'postgres' };
      return {
        kind: 'embedded',
        connection,
        sessionConnection: connection,
        pooling: 'session',
        description: `embedded database in ${dataDir} (through the running server)`,
        close: async () => undefined,
      };
    }
  }
  // The socket multiplexes every pooled connection onto one engine; leave head-room above the pool.
  const embedded = await EmbeddedPostgres.start(dataDir, poolSize * 2 + 10);
  const connection = { ...embedded.endpoint, username: 'postgres', database: 'postgres' };
  return {
    kind: 'embedded',
    connection,
    sessionConnection: connection,
    pooling: 'session',
    notifications: embedded.notifications,
    description: `embedded database in ${dataDir}`,
    close: () => embedded.stop(),
  };
}

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}
