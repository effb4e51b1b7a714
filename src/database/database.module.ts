import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import { AppConfig } from '../config/config.schema.js';
import { CursorCodec } from './cursor-codec.js';
import { dataSourceOptions, poolWaitTimeoutMs } from './data-source-options.js';
import { DatabaseTarget } from './database-target.js';

import { DATABASE_TARGET } from './database-tokens.js';
import { KeysetPager } from './keyset-pager.js';
import { OwnedPool } from './owned-pool.js';
import { PreparedStatements } from './prepared-statements.js';

export { DATABASE_TARGET };

/** The database this process opened (main.ts, the CLI), as `DatabaseModule.forRoot` was given it. */
interface OpenedDatabase {
  target: DatabaseTarget;
  owned: OwnedPool;
  serving: boolean;
}

/** Known to this file only: features reach the opened database through `DatabaseModule`'s providers. */
const OPENED_DATABASE = Symbol('OPENED_DATABASE');

/**
 * The root half, configured once per process (`DatabaseModule.forRoot`): TypeORM's connection and the
 * opened database. Global as `TypeOrmModule.forRoot`'s core is, and for the same reason (the one
 * configuration every `DatabaseModule` import reads); it exports nothing a feature injects but
 * TypeORM's own `DataSource`.
 */
@Module({})
class DatabaseRootModule {}

/**
 * The database for features: a module that uses the opened target, the pool, the prepared statements or
 * the keyset pages (or TypeORM's `DataSource`) imports `DatabaseModule`. `AppModule` and the CLI add
 * `DatabaseModule.forRoot(...)` once, as with `TypeOrmModule.forRoot` and `forFeature`.
 */
@Module({
  providers: [
    { provide: DATABASE_TARGET, inject: [OPENED_DATABASE], useFactory: (opened: OpenedDatabase) => opened.target },
    { provide: OwnedPool, inject: [OPENED_DATABASE], useFactory: (opened: OpenedDatabase) => opened.owned },
    {
      provide: PreparedStatements,
      inject: [DataSource, OPENED_DATABASE],
      useFactory: (dataSource: DataSource, { target, owned, serving }: OpenedDatabase) =>
        new PreparedStatements(dataSource, owned, serving && target.kind === 'server' && target.pooling === 'session'),
    },
    { provide: CursorCodec, inject: [APP_CONFIG], useFactory: (appConfig: AppConfig) => CursorCodec.fromSecret(appConfig.secretKey) },
    KeysetPager,
  ],
  exports: [DATABASE_TARGET, OwnedPool, PreparedStatements, CursorCodec, KeysetPager],
})
export class DatabaseModule {
  /** `serving`: the server's pool, which answers requests (the timeouts and shedding apply); false in the CLI. */
  static forRoot(config: AppConfig, target: DatabaseTarget, { serving }: { serving: boolean }): DynamicModule {
    const owned = new OwnedPool({ waitTimeoutMs: poolWaitTimeoutMs(config, target, { serving }) });
    const opened: OpenedDatabase = { target, owned, serving };
    return {
      module: DatabaseRootModule,
      global: true,
      imports: [
        TypeOrmModule.forRoot({
          ...dataSourceOptions(config, target, { serving, owned }),
          // Fail fast with a clear message instead of retrying for minutes.
          retryAttempts: 0,
        }),
      ],
      providers: [{ provide: OPENED_DATABASE, useValue: opened }],
      exports: [OPENED_DATABASE],
    };
  }
}
