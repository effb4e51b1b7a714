import pg from 'pg';

/**
 * The `pg` pool behind TypeORM, held by the project. TypeORM builds its pool itself from its options,
 * with the `pg` module it is given as its documented `driver` option; the module handed over here is
 * `pg` whose `Pool` records the instance it makes. So the hot reads (`PreparedStatements`) run named
 * prepared statements on the very connections TypeORM uses (one budget: DATABASE_POOL_SIZE), without
 * reaching into TypeORM's private fields. TypeORM ends the pool when the data source is destroyed.
 */
export class OwnedPool {
  private instance?: pg.Pool;

  /** The `driver` option for TypeORM: `pg`, with a Pool that this object keeps. */
  readonly driver: typeof pg;

  constructor() {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const owner = this;
    class RecordedPool extends pg.Pool {
      constructor(config?: pg.PoolConfig) {
        super(config);
        owner.instance = this;
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
}
