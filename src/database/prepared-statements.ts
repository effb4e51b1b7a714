import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { OwnedPool } from './owned-pool.js';

/** A statement run often enough to keep prepared. `name` says what it is; it is prepared under a name of its text. */
export interface Statement {
  name: string;
  text: string;
}

/**
 * The name a text is prepared under: the same text has the same name in every process and every
 * version of the service, and a name never stands for two texts (a pooler in session mode hands a
 * server session from one client to the next; a name given in order of first use could mean other SQL there).
 */
export function preparedName(text: string): string {
  return `agora_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
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
 * would collide with the next one's, and it is safe with a single connection only. Behind a pooler in
 * transaction mode (DATABASE_POOLING=transaction), a statement prepared on one server session is
 * unknown to the next one the pooler hands out (PgBouncer before 1.21 does not carry prepared
 * statements across them). The CLI has nothing hot to run, and a command's statements must all go
 * through TypeORM to share one transaction (`inOneTransaction`, seed:demo).
 */
export class PreparedStatements {
  constructor(
    private readonly dataSource: DataSource,
    private readonly owned: OwnedPool,
    /** The serving pool on a PostgreSQL server that gives each connection its own session (DatabaseModule). */
    private readonly named: boolean,
  ) {}

  async query<R extends Record<string, unknown>>(statement: Statement, values: unknown[]): Promise<R[]> {
    return this.prepared(statement.text, values, this.named ? this.nameOf(statement.text) : undefined);
  }

  /**
   * A statement built at run time (the reads of the event pages: one text per combination of filters
   * and page bounds, values always bound as parameters), prepared under a name given to its text. Past
   * MAX_NAMED texts the rest run unnamed, so a connection never holds an unbounded number of them.
   */
  run<R extends Record<string, unknown>>(text: string, values: unknown[]): Promise<R[]> {
    const name = this.named ? (this.names.get(text) ?? (this.names.size < MAX_NAMED ? this.nameOf(text) : undefined)) : undefined;
    return this.prepared(text, values, name);
  }

  private async prepared<R extends Record<string, unknown>>(text: string, values: unknown[], name: string | undefined): Promise<R[]> {
    if (name === undefined) return (await this.dataSource.query(text, values)) as R[];
    // Logged as TypeORM logs its own statements (the statement-count tests listen there).
    this.dataSource.logger.logQuery(text, values);
    return (await this.owned.pool.query<R>({ name, text, values })).rows;
  }

  /** The names of the texts prepared so far (the static statements, and up to MAX_NAMED in all from run time). */
  private nameOf(text: string): string {
    let name = this.names.get(text);
    if (name === undefined) this.names.set(text, (name = preparedName(text)));
    return name;
  }

  private readonly names = new Map<string, string>();
}

const MAX_NAMED = 500;
