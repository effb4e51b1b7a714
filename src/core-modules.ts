import { AccountMailModule } from './account-mail/account-mail.module.js';
import { AccountLinksModule } from './account-links/account-links.module.js';
import { AuthModule } from './auth/auth.module.js';
import { ClockModule } from './clock/clock.js';
import { ConfigModule } from './config/config.module.js';
import { AppConfig } from './config/config.schema.js';
import { DatabaseModule } from './database/database.module.js';
import { DatabaseTarget } from './database/database-target.js';
import { EventsModule } from './events/events.module.js';
import { ErrorsModule } from './errors/errors.module.js';
import { JobsModule } from './jobs/jobs.module.js';
import { LegacyApiModule } from './legacy-api/legacy-api.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { NotificationsModule } from './notifications/notifications.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';
import { SecurityNoticesModule } from './security-notices/security-notices.module.js';
import { OAuthModule } from './oauth/oauth.module.js';
import { RateLimitsModule } from './rate-limits/rate-limits.module.js';
import { PersonalTokensModule } from './personal-tokens/personal-tokens.module.js';
import { UsersModule } from './users/users.module.js';
import { WebModule } from './web/web.module.js';

/**
 * Feature modules every process of the service (server and CLI) loads. `serving`: true in the server,
 * whose database pool answers requests and so gets the statement timeouts and the pool wait bound. In a
 * file of their own so that the CLI, which loads these alone, does not also load the server's other
 * modules (GraphQL, the pages, the MCP server, passkeys, two-factor, health) with app.module.ts.
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
