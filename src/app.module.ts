import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AccountMailModule } from './account-mail/account-mail.module.js';
import { AccountLinksModule } from './account-links/account-links.module.js';
import { AuthModule } from './auth/auth.module.js';
import { ClockModule } from './clock/clock.js';
import { ConfigModule } from './config/config.module.js';
import { AppConfig } from './config/config.schema.js';
import { DashboardModule } from './dashboard/dashboard.module.js';
import { DatabaseModule } from './database/database.module.js';
import { DatabaseTarget } from './database/database-target.js';
import { EventsModule } from './events/events.module.js';
import { ErrorsModule } from './errors/errors.module.js';
import { FallbackExceptionFilter } from './errors/fallback-exception.filter.js';
import { GraphqlModule } from './graphql/graphql.module.js';
import { HealthModule } from './health/health.module.js';
import { JobsModule } from './jobs/jobs.module.js';
import { HousekeepingModule } from './housekeeping/housekeeping.module.js';
import { LegacyApiModule } from './legacy-api/legacy-api.module.js';
import { McpModule } from './mcp/mcp.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { NotificationsModule } from './notifications/notifications.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';
import { SecurityNoticesModule } from './security-notices/security-notices.module.js';
import { OAuthModule } from './oauth/oauth.module.js';
import { PasskeysModule } from './passkeys/passkeys.module.js';
import { RateLimitsModule } from './rate-limits/rate-limits.module.js';
import { PersonalTokensModule } from './personal-tokens/personal-tokens.module.js';
import { ShutdownModule } from './shutdown/shutdown.module.js';
import { TwoFactorModule } from './two-factor/two-factor.module.js';
import { UsersModule } from './users/users.module.js';
import { WebModule } from './web/web.module.js';

/**
 * Feature modules every process of the service (server and CLI) loads. `serving`: true in the server,
 * whose database pool answers requests and so gets the statement timeouts and the pool wait bound.
 */
export function coreModules(config: AppConfig, target: DatabaseTarget, { serving }: { serving: boolean }) {
  return [
    ConfigModule.forRoot(config),
    ClockModule,
    ErrorsModule,
    DatabaseModule.forRoot(config, target, { serving }),
    MetricsModule,
    JobsModule.forRoot({ work: serving }),
    RateLimitsModule,
    AuthModule,
    WebModule,
    UsersModule,
    PersonalTokensModule,
    OAuthModule,
    EventsModule,
    NotificationsModule,
    WebhooksModule,
    SecurityNoticesModule,
    AccountMailModule,
    AccountLinksModule,
    LegacyApiModule,
  ];
}

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
