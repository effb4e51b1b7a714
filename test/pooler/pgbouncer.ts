import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, chmodSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { withDatabase } from '../support/database.js';
import { freePort } from '../support/test-app.js';

export type PoolMode = 'transaction' | 'session' | 'statement';

export interface PgBouncerOptions {
  /** PgBouncer's pool_mode. */
  mode: PoolMode;
  /** Server connections per database and user (default_pool_size). */
  poolSize: number;
}

/** A line of the admin console's SHOW POOLS. */
export interface PoolRow {
  database: string;
  user: string;
  cl_active: string;
  cl_waiting: string;
  sv_active: string;
  sv_idle: string;
  sv_used: string;
  maxwait: string;
  pool_mode: string;
}

/** The PgBouncer binary: PGBOUNCER, or Debian's (`apt-get install pgbouncer`; .ci/run installs it when missing). */
export function pgbouncerBinary(): string {
  const binary = process.env.PGBOUNCER || '/usr/sbin/pgbouncer';
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    throw new Error(`No PgBouncer at ${binary}: install it (apt-get install pgbouncer) or set PGBOUNCER to its path`);
  }
  return binary;
}

/**
 * A PgBouncer of the test's own, in front of the PostgreSQL server of `serverUrl`: its configuration and
 * auth file in a temporary directory, listening on a free port of 127.0.0.1 (never the system service's
 * 6432), `auth_type = trust`, every database name passed through to the server (`* = host=… port=…`).
 * PgBouncer refuses to run as root: as root it is started with `-u postgres` (it reads its files, then
 * switches user; the directory and files are readable by everyone).
 */
export class PgBouncer {
  private child?: ChildProcess;
  private output = '';
  private readonly dir = mkdtempSync(join(tmpdir(), 'agora-pooler-pgbouncer-'));
  port = 0;

  constructor(
    private readonly serverUrl: string,
    readonly options: PgBouncerOptions,
  ) {}

  get mode(): PoolMode {
    return this.options.mode;
  }

  /** The same URL as `serverUrl`'s user and password, through this PgBouncer, to `database`. */
  url(database: string): string {
    const url = new URL(withDatabase(this.serverUrl, database));
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  async start(): Promise<void> {
    const binary = pgbouncerBinary();
    const server = new URL(this.serverUrl);
    const user = decodeURIComponent(server.username || 'postgres');
    const password = decodeURIComponent(server.password);
    this.port = await freePort();
    const auth = join(this.dir, 'userlist.txt');
    const config = join(this.dir, 'pgbouncer.ini');
    writeFileSync(auth, `"${user}" "${password}"\n`);
    writeFileSync(
      config,
      [
        '[databases]',
        `* = host=${server.hostname} port=${server.port || 5432}`,
        '',
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${this.port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${auth}`,
        `admin_users = ${user}`,
        `pool_mode = ${this.options.mode}`,
        `default_pool_size = ${this.options.poolSize}`,
        'max_client_conn = 2000',
        // Clients wait for a server connection rather than failing: a wait is what sharing costs.
        'query_wait_timeout = 60',
        'log_connections = 0',
        'log_disconnections = 0',
        '',
      ].join('\n'),
    );
    chmodSync(this.dir, 0o755);
    chmodSync(auth, 0o644);
    chmodSync(config, 0o644);

    const asRoot = process.getuid?.() === 0;
    const child = spawn(binary, [...(asRoot ? ['-u', process.env.PGBOUNCER_USER || 'postgres'] : []), config], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout!.on('data', (d: Buffer) => (this.output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
    await new Promise<void>((resolve, reject) => {
      const fail = (message: string) => {
        clearInterval(poll);
        reject(new Error(`${message}:\n${this.output}`));
      };
      child.once('error', (err) => fail(`Cannot run ${binary}: ${err.message}`));
      child.once('exit', (code) => fail(`${binary} exited ${code}`));
      const poll = setInterval(() => {
        if (/process up/.test(this.output)) {
          clearInterval(poll);
          child.removeAllListeners('exit');
          child.removeAllListeners('error');
          resolve();
        }
      }, 20);
    });
  }

  /** What PgBouncer has logged. */
  log(): string {
    return this.output;
  }

  /** SHOW POOLS on the admin console, for `database`. */
  async pools(database: string): Promise<PoolRow[]> {
    const client = new pg.Client({ connectionString: this.url('pgbouncer') });
    await client.connect();
    try {
      const { rows } = await client.query<PoolRow>('SHOW POOLS');
      return rows.filter((r) => r.database === database);
    } finally {
      await client.end();
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM'); // immediate shutdown
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Starts a PgBouncer in each mode asked for, in front of `serverUrl`. */
export async function startPgBouncers(serverUrl: string, ...options: PgBouncerOptions[]): Promise<PgBouncer[]> {
  const bouncers = options.map((o) => new PgBouncer(serverUrl, o));
  try {
    await Promise.all(bouncers.map((b) => b.start()));
  } catch (err) {
    await Promise.all(bouncers.map((b) => b.stop()));
    throw err;
  }
  return bouncers;
}
