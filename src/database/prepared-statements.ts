import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { poolConfig } from './data-source-options.js';
import type { DatabaseTarget } from './database-target.js';
import { DATABASE_TARGET } from './database-tokens.js';

/** A statement run often enough to keep prepared: its name must be unique in the service. */
export interface Statement {
  name: string;
  text: string;
}

/**
 * Runs hot statements as named prepared statements on a PostgreSQL server: each pooled connection
 * parses and plans the statement once, then only binds and executes it. On the token endpoint this
 * more than halves PostgreSQL's CPU per request (pgbench: 2,030 → 4,650 exchanges/s; docs/benchmarks.md).
 *
 * The statements run on a `pg` pool of their own, created here from the same settings as TypeORM's
 * and as large (DATABASE_POOL_SIZE): a server process holds up to twice DATABASE_POOL_SIZE connections.
 * It is ended when the application closes, after the requests it served.
 *
 * On the embedded database the statement runs unnamed, on TypeORM's one connection: PGlite serves
 * every socket connection from one session, where a name prepared by one connection would collide
 * with the next one's, and it is safe with a single connection only.
 */
@Injectable()
export class PreparedStatements implements OnApplicationShutdown {
  private readonly pool?: pg.Pool;
  private readonly logger = new Logger(PreparedStatements.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(DATABASE_TARGET) target: DatabaseTarget,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    if (target.kind === 'server') {
      this.pool = new pg.Pool(poolConfig(config, target, config.database.poolSize));
      // An idle connection the server closes must not take the process down; the next query reconnects.
      this.pool.on('error', (err) => this.logger.warn(`Prepared statements' pool: ${err.message}`));
    }
  }

  async query<R extends Record<string, unknown>>(statement: Statement, values: unknown[]): Promise<R[]> {
    if (!this.pool) return (await this.dataSource.query(statement.text, values)) as R[];
    // Logged as TypeORM logs its own statements (the statement-count tests listen there).
    this.dataSource.logger.logQuery(statement.text, values);
    return (await this.pool.query<R>({ name: statement.name, text: statement.text, values })).rows;
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

  async onApplicationShutdown(): Promise<void> {
    await this.pool?.end();
  }

  private readonly names = new Map<string, string>();
}

const MAX_NAMED = 500;
