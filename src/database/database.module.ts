import { DynamicModule, Global, Module } from '@nestjs/common';
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

@Global()
@Module({})
export class DatabaseModule {
  /** `serving`: the server's pool, which answers requests (the timeouts and shedding apply); false in the CLI. */
  static forRoot(config: AppConfig, target: DatabaseTarget, { serving }: { serving: boolean }): DynamicModule {
    const owned = new OwnedPool({ waitTimeoutMs: poolWaitTimeoutMs(config, target, { serving }) });
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRoot({
          ...dataSourceOptions(config, target, { serving, owned }),
          // Fail fast with a clear message instead of retrying for minutes.
          retryAttempts: 0,
        }),
      ],
      providers: [
        { provide: DATABASE_TARGET, useValue: target },
        { provide: OwnedPool, useValue: owned },
        {
          provide: PreparedStatements,
          inject: [DataSource],
          useFactory: (dataSource: DataSource) =>
            new PreparedStatements(dataSource, owned, serving && target.kind === 'server' && target.pooling === 'session'),
        },
        { provide: CursorCodec, inject: [APP_CONFIG], useFactory: (appConfig: AppConfig) => CursorCodec.fromSecret(appConfig.secretKey) },
        KeysetPager,
      ],
      exports: [DATABASE_TARGET, OwnedPool, PreparedStatements, CursorCodec, KeysetPager],
    };
  }
}
