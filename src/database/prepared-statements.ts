import { DataSource } from 'typeorm';
import { OwnedPool } from './owned-pool.js';

/** A statement run often enough to keep prepared: its name must be unique in the service. */
export interface Statement {
  name: string;
  text: string;
}

/**
 * Runs hot statements as named prepared statements in the server's pool on PostgreSQL: each connection
 * parses and plans the statement once, then only binds and executes it. On the token endpoint this
 * more than halves PostgreSQL's CPU per request (pgbench: 2,030 → 4,650 exchanges/s; docs/benchmarks.md).
 *
 * The statements run on TypeORM's own connections, through the pool the project holds (`OwnedPool`):
 * one connection budget (DATABASE_POOL_SIZE) per process.
 *
 * Elsewhere (`named` false) the statement runs unnamed, through TypeORM. On the embedded database,
 * PGlite serves every socket connection from one session, where a name prepared by one connection
 * would collide with the next one's, and it is safe with a single connection only. The CLI has nothing
 * hot to run, and a command's statements must all go through TypeORM to share one transaction
 * (`inOneTransaction`, seed:demo).
 */
export class PreparedStatements {
  constructor(
    private readonly dataSource: DataSource,
    private readonly owned: OwnedPool,
    /** The serving pool on a PostgreSQL server (DatabaseModule). */
    private readonly named: boolean,
  ) {}

  async query<R extends Record<string, unknown>>(statement: Statement, values: unknown[]): Promise<R[]> {
    if (!this.named) return (await this.dataSource.query(statement.text, values)) as R[];
    // Logged as TypeORM logs its own statements (the statement-count tests listen there).
    this.dataSource.logger.logQuery(statement.text, values);
    return (await this.owned.pool.query<R>({ name: statement.name, text: statement.text, values })).rows;
  }

  /**
   * A statement built at run time (the reads of the event pages: one text per combination of filters
   * and page bounds, values always bound as parameters), prepared under a name given to its text. Past
   * MAX_NAMED texts the rest run unnamed, so a connection never holds an unbounded number of them.
   */
  run<R extends Record<string, unknown>>(text: string, values: unknown[]): Promise<R[]> {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < MAX_NAMED) this.names.set(text, (name = `agora_run_${this.names.size + 1}`));
    if (name === undefined) return this.dataSource.query(text, values) as Promise<R[]>;
    return this.query({ name, text }, values);
  }

  private readonly names = new Map<string, string>();
}

const MAX_NAMED = 500;
