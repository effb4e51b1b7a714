import pg from 'pg';
import { PoolWaitTimeoutError } from '../errors/database-unavailable.js';
import { PoolWaits } from './pool-waits.js';

type Callback = (err: Error | undefined, client?: pg.PoolClient, release?: (err?: Error) => void) => void;

export interface OwnedPoolOptions {
  /**
   * The longest a statement waits for a connection once the pool has connected (0: no bound of ours).
   * `poolWaitTimeoutMs` in data-source-options.ts: the serving pool on a PostgreSQL server only.
   */
  waitTimeoutMs: number;
}

/**
 * The `pg` pool behind TypeORM, held by the project. TypeORM builds its pool itself from its options,
 * with the `pg` module it is given as its documented `driver` option; the module handed over here is
 * `pg` whose `Pool` records the instance it makes. So the hot reads (`PreparedStatements`) run named
 * prepared statements on the very connections TypeORM uses (one budget: DATABASE_POOL_SIZE), without
 * reaching into TypeORM's private fields. TypeORM ends the pool when the data source is destroyed.
 *
 * The pool also bounds every wait (docs/operations.md, "Timeouts"): a statement that cannot have a
 * connection within `waitTimeoutMs` fails with PoolWaitTimeoutError (503, `Retry-After`) instead of
 * queueing behind a slow or silent database, and a connection whose statement got no answer within
 * pg's `query_timeout` is discarded rather than handed to the next request.
 */
export class OwnedPool {
  private instance?: pg.Pool & { connectUnshed(): Promise<pg.PoolClient> };
  private lastReply = performance.now();
  private waiting = 0;

  /** The `driver` option for TypeORM: `pg`, with a Pool that this object keeps. */
  readonly driver: typeof pg;
  /** Every wait for a connection: metrics listen, slow ones are logged. */
  readonly waits: PoolWaits;

  constructor(options: OwnedPoolOptions = { waitTimeoutMs: 0 }) {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const owner = this;
    const bound = options.waitTimeoutMs;
    this.waits = new PoolWaits(bound > 0 ? Math.max(1, Math.floor(bound / 4)) : 1000);

    class BoundedClient extends pg.Client {
      // One wrapper for the callback form (pg-pool's `pool.query`) and the promise form (TypeORM).
      override query(...args: unknown[]): never {
        const last = args.length - 1;
        const callback = args[last];
        const settled = (err: unknown) => {
          // The server answered (a result, or an error with a SQLSTATE: a statement cancelled by
          // statement_timeout, a lock timeout, a constraint): the pool makes progress, even when the
          // database is too slow or locked for any statement to succeed. Only no answer at all (the
          // client gave up, the socket failed) is no progress.
          if (!err || err instanceof pg.DatabaseError) owner.lastReply = performance.now();
          // pg's query_timeout gives up on the statement but leaves it in flight on the connection, so
          // the next statement there would wait behind it: end the connection (its socket is destroyed
          // at once, and the pool drops a client that is ending when it comes back).
          else if ((err as Error).message === 'Query read timeout') void this.end().catch(() => undefined);
        };
        if (typeof callback === 'function') {
          args[last] = (err: unknown, result: unknown) => {
            settled(err);
            (callback as (err: unknown, result: unknown) => void)(err, result);
          };
          return (super.query as (...a: unknown[]) => never)(...args);
        }
        const result = (super.query as (...a: unknown[]) => unknown)(...args);
        if (!(result instanceof Promise)) return result as never;
        return result.then(
          (value: unknown) => {
            settled(undefined);
            return value;
          },
          (err: unknown) => {
            settled(err);
            throw err;
          },
        ) as never;
      }
    }

    class RecordedPool extends pg.Pool {
      private opened = false;

      constructor(config?: pg.PoolConfig) {
        super({ ...config, Client: BoundedClient } as pg.PoolConfig);
        owner.instance = this;
      }

      override connect(): Promise<pg.PoolClient>;
      override connect(callback: Callback): void;
      override connect(callback?: Callback): Promise<pg.PoolClient> | void {
        if (callback) return this.acquire(callback);
        return new Promise((resolve, reject) => this.acquire((err, client) => (err ? reject(err) : resolve(client!))));
      }

      /** A connection without our wait bound, for the liveness check (its caller bounds the wait). */
      connectUnshed(): Promise<pg.PoolClient> {
        return super.connect();
      }

      /**
       * pg-pool's own timeout (`connectionTimeoutMillis`, DATABASE_CONNECT_TIMEOUT_SECONDS) bounds opening
       * a connection; this bounds the statement's wait, which is shorter. A connection that arrives for a
       * statement that gave up is handed back at once, to the next waiter. Until the pool has connected
       * once (start-up), only the connect timeout applies.
       */
      private acquire(callback: Callback): void {
        const started = performance.now();
        let answered = false;
        owner.waiting++;
        const timer =
          bound > 0 && this.opened
            ? setTimeout(() => {
                answered = true;
                owner.waiting--;
                owner.waits.record(performance.now() - started, true);
                callback(new PoolWaitTimeoutError(bound));
              }, bound)
            : undefined;
        super.connect((err: Error | undefined, client?: pg.PoolClient, release?: (err?: Error) => void) => {
          clearTimeout(timer);
          if (answered) {
            if (client) release!();
            return;
          }
          answered = true;
          owner.waiting--;
          if (!err) this.opened = true;
          owner.waits.record(performance.now() - started, false);
          callback(err, client, release);
        });
      }
    }

    this.driver = Object.assign(Object.create(pg) as typeof pg, { Pool: RecordedPool });
  }

  /** The pool, or undefined before TypeORM has connected (what a metrics scrape reads). */
  get openPool(): pg.Pool | undefined {
    return this.instance;
  }

  /** The pool, once TypeORM has connected (before any request is served). */
  get pool(): pg.Pool {
    if (!this.instance) throw new Error('The database pool is not open yet');
    return this.instance;
  }

  /**
   * Statements waiting for a connection now. (pg-pool's own `waitingCount` also counts the waits given
   * up, which stay in its queue until a connection comes free and is handed straight back.)
   */
  get waitingCount(): number {
    return this.waiting;
  }

  /**
   * When (performance.now()) a statement through the pool last got an answer from the server, a result
   * or an error with a SQLSTATE: the pool makes progress.
   */
  get lastReplyAt(): number {
    return this.lastReply;
  }

  /**
   * Runs `SELECT 1` on a pooled connection that waits in the pool's queue without being shed: the
   * liveness check asks whether the pool hands out a connection that answers at all, and bounds the
   * wait itself. An answer counts as progress like any other.
   */
  async selectOne(): Promise<void> {
    if (!this.instance) throw new Error('The database pool is not open yet');
    const client = await this.instance.connectUnshed();
    try {
      await client.query('SELECT 1');
    } catch (err) {
      client.release(err as Error);
      throw err;
    }
    client.release();
  }
}
