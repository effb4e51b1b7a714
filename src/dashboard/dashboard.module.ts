import { Module } from '@nestjs/common';
import { PersonalTokensModule } from '../personal-tokens/personal-tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { OAuthModule } from '../oauth/oauth.module.js';
import { AccountController } from './account.controller.js';
import { ApplicationsController } from './applications.controller.js';
import { ExplorerController } from './explorer.controller.js';
import { SecurityController } from './security.controller.js';
import { SessionCredential } from './session-credential.js';

/** The dashboard pages for signed-in users, and the session as the API explorer's credential. */
@Module({
  imports: [SessionsModule, PersonalTokensModule, OAuthModule, UsersModule],
  controllers: [AccountController, SecurityController, ApplicationsController, ExplorerController],
  providers: [SessionCredential],
})
export class DashboardModule {}
