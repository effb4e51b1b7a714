import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountLinksModule } from '../account-links/account-links.module.js';
import { OAuthModule } from '../oauth/oauth.module.js';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { HousekeepingRunEntity } from './housekeeping-run.entity.js';
import { HousekeepingService } from './housekeeping.service.js';

/** Periodic clean-up of expired rows; part of the server, not of the CLI. */
@Module({
  imports: [
    TypeOrmModule.forFeature([HousekeepingRunEntity]),
    SessionsModule,
    OAuthModule,
    PasskeysModule,
    AccountLinksModule,
    WebhooksModule,
  ],
  providers: [HousekeepingService],
})
export class HousekeepingModule {}
