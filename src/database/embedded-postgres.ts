import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { InProcessNotifications, ListeningPGlite } from './listening-pglite.js';

/** Where a client finds a PostgreSQL wire-protocol endpoint: a Unix socket directory, as libpq and `pg` expect. */
export interface SocketEndpoint {
  host: string;
  port: number;
}

interface LockFile {
  pid: number;
  socketDir: string;
  startedAt: string;
}

const SOCKET_PORT = 5432;
// Unix socket paths are limited to 107 bytes on Linux; the socket file name adds 16.
const MAX_SOCKET_DIR_LENGTH = 90;

export class EmbeddedDatabaseBusyError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `The embedded database in ${dataDir} is already open by process ${pid}. ` +
        'Only one server may open it: stop that process, point DATA_DIR elsewhere, or set DATABASE_URL to a PostgreSQL server to run several instances.',
    );
    this.name = 'EmbeddedDatabaseBusyError';
  }
}

/**
 * The embedded database: a real PostgreSQL engine (PGlite) in this process, served over its wire
 * protocol on a Unix socket inside DATA_DIR, so the application talks to it through the same `pg`
 * driver and migrations as to a PostgreSQL server. A lock file lets other processes (the CLI) find
 * the socket of a running server instead of opening the data directory a second time.
 */
export class EmbeddedPostgres {
  private constructor(
    readonly dataDir: string,
    readonly endpoint: SocketEndpoint,
    private readonly db: ListeningPGlite,
    private readonly server: PGLiteSocketServer,
    private readonly lockPath: string,
  ) {}

  static async start(dataDir: string, maxConnections: number): Promise<EmbeddedPostgres> {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    chmodSync(dataDir, 0o700);
    const lockPath = join(dataDir, 'agora.lock');
    const holder = await EmbeddedPostgres.liveHolder(dataDir);
    if (holder) throw new EmbeddedDatabaseBusyError(dataDir, holder.pid);
    rmSync(lockPath, { force: true });

    const socketDir = dataDir.length <= MAX_SOCKET_DIR_LENGTH ? dataDir : shortSocketDir();
    mkdirSync(socketDir, { recursive: true, mode: 0o700 });
    const socketPath = join(socketDir, `.s.PGSQL.${SOCKET_PORT}`);
    rmSync(socketPath, { force: true });

    const db = new ListeningPGlite(join(dataDir, 'pgdata'));
    await db.waitReady;
    const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections });
    try {
      await server.start();
      chmodSync(socketPath, 0o600);
    } catch (err) {
      await db.close();
      throw err;
    }
    const lock: LockFile = { pid: process.pid, socketDir, startedAt: new Date().toISOString() };
    writeFileSync(lockPath, JSON.stringify(lock), { mode: 0o600 });
    return new EmbeddedPostgres(dataDir, { host: socketDir, port: SOCKET_PORT }, db, server, lockPath);
  }

  /** Notifications committed by any client of the socket, heard here before that client is answered. */
  get notifications(): InProcessNotifications {
    return this.db;
  }

  /** The socket of a server that has this data directory open right now, if any. */
  static async runningEndpoint(dataDir: string): Promise<SocketEndpoint | undefined> {
    const holder = await EmbeddedPostgres.liveHolder(dataDir);
    return holder ? { host: holder.socketDir, port: SOCKET_PORT } : undefined;
  }

  private static async liveHolder(dataDir: string): Promise<LockFile | undefined> {
    const lockPath = join(dataDir, 'agora.lock');
    if (!existsSync(lockPath)) return undefined;
    let lock: LockFile;
    try {
      lock = JSON.parse(readFileSync(lockPath, 'utf8')) as LockFile;
    } catch {
      return undefined;
    }
    if (!processAlive(lock.pid)) return undefined;
    const socketPath = join(lock.socketDir, `.s.PGSQL.${SOCKET_PORT}`);
    return (await socketAccepts(socketPath)) ? lock : undefined;
  }

  async stop(): Promise<void> {
    await this.server.stop();
    await this.db.close();
    rmSync(this.lockPath, { force: true });
    rmSync(join(this.endpoint.host, `.s.PGSQL.${SOCKET_PORT}`), { force: true });
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function socketAccepts(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ path });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function shortSocketDir(): string {
  return join('/tmp', `agora-${process.pid}-${Date.now().toString(36)}`);
}
