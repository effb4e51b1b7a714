import { Module } from '@nestjs/common';
import { PersonalTokensModule } from '../personal-tokens/personal-tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { OAuthModule } from '../oauth/oauth.module.js';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { AccountLinksModule } from '../account-links/account-links.module.js';
import { AccountController } from './account.controller.js';
import { ApplicationsController } from './applications.controller.js';
import { ExplorerController } from './explorer.controller.js';
import { SecurityController } from './security.controller.js';
import { SessionCredential } from './session-credential.js';
import { TwoFactorPagesController } from './two-factor.controller.js';
import { TwoFactorModule } from '../two-factor/two-factor.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { WebhooksController } from './webhooks.controller.js';
import { ServiceAccountsController } from './service-accounts.controller.js';
import { ResourceServersController } from './resource-servers.controller.js';
import { EventsModule } from '../events/events.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { WebModule } from '../web/web.module.js';

/** The dashboard pages for signed-in users, and the session as the API explorer's credential. */
@Module({
  imports: [
    SessionsModule,
    PersonalTokensModule,
    OAuthModule,
    UsersModule,
    SecurityNoticesModule,
    TwoFactorModule,
    PasskeysModule,
    AccountLinksModule,
    WebhooksModule,
    EventsModule,
    AuthModule,
    MetricsModule,
    WebModule,
  ],
  controllers: [
    AccountController,
    SecurityController,
    ApplicationsController,
    ExplorerController,
    TwoFactorPagesController,
    WebhooksController,
    ServiceAccountsController,
    ResourceServersController,
  ],
  providers: [SessionCredential],
})
export class DashboardModule {}
