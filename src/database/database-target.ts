import { AppConfig } from '../config/config.schema.js';
import { EmbeddedPostgres } from './embedded-postgres.js';
import type { InProcessNotifications } from './listening-pglite.js';

/** Where the application's PostgreSQL lives and how to let go of it. */
export interface DatabaseTarget {
  kind: 'embedded' | 'server';
  /** Connection settings for `pg`/TypeORM. */
  connection: { url?: string; host?: string; port?: number; username?: string; database?: string };
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

/**
 * Opens the configured database: the PostgreSQL server of DATABASE_URL, or the embedded engine in
 * DATA_DIR. `shareRunning` lets a short-lived process (the CLI) use the socket of a server that already
 * has the embedded database open instead of failing on its lock.
 */
export async function openDatabaseTarget(config: AppConfig, options: { shareRunning?: boolean } = {}): Promise<DatabaseTarget> {
  const { url, dataDir, poolSize } = config.database;
  if (url) {
    return { kind: 'server', connection: { url }, description: redactUrl(url), close: async () => undefined };
  }
  if (options.shareRunning) {
    const endpoint = await EmbeddedPostgres.runningEndpoint(dataDir);
    if (endpoint) {
      return {
        kind: 'embedded',
        connection: { ...endpoint, username: 'postgres', database: 'postgres' },
        description: `embedded database in ${dataDir} (through the running server)`,
        close: async () => undefined,
      };
    }
  }
  // The socket multiplexes every pooled connection onto one engine; leave head-room above the pool.
  const embedded = await EmbeddedPostgres.start(dataDir, poolSize * 2 + 10);
  return {
    kind: 'embedded',
    connection: { ...embedded.endpoint, username: 'postgres', database: 'postgres' },
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
