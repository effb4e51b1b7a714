import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { DashboardModule } from './dashboard/dashboard.module.js';
import { FallbackExceptionFilter } from './errors/fallback-exception.filter.js';
import { GraphqlModule } from './graphql/graphql.module.js';
import { HealthModule } from './health/health.module.js';
import { HousekeepingModule } from './housekeeping/housekeeping.module.js';
import { McpModule } from './mcp/mcp.module.js';
import { PasskeysModule } from './passkeys/passkeys.module.js';
import { ShutdownModule } from './shutdown/shutdown.module.js';
import { TwoFactorModule } from './two-factor/two-factor.module.js';
import { AppConfig } from './config/config.schema.js';
import { DatabaseTarget } from './database/database-target.js';
import { coreModules } from './core-modules.js';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, target: DatabaseTarget): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ...coreModules(config, target, { serving: true }),
        DashboardModule,
        TwoFactorModule,
        PasskeysModule,
        GraphqlModule,
        McpModule,
        HealthModule.forRoot(config),
        HousekeepingModule,
        ShutdownModule,
      ],
      providers: [{ provide: APP_FILTER, useClass: FallbackExceptionFilter }],
    };
  }
}
