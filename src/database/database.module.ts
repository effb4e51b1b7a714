import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/config.schema.js';
import { dataSourceOptions } from './data-source-options.js';
import { DatabaseTarget } from './database-target.js';

/** Injection token for the opened DatabaseTarget (owned by the process, see main.ts). */
export const DATABASE_TARGET = Symbol('DATABASE_TARGET');

@Global()
@Module({})
export class DatabaseModule {
  static forRoot(config: AppConfig, target: DatabaseTarget): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRoot({
          ...dataSourceOptions(config, target),
          // Fail fast with a clear message instead of retrying for minutes.
          retryAttempts: 0,
        }),
      ],
      providers: [{ provide: DATABASE_TARGET, useValue: target }],
      exports: [DATABASE_TARGET],
    };
  }
}
