import { Module } from '@nestjs/common';
import { OAuthModule } from '../oauth/oauth.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { HousekeepingService } from './housekeeping.service.js';

/** Periodic clean-up of expired rows; part of the server, not of the CLI. */
@Module({ imports: [SessionsModule, OAuthModule], providers: [HousekeepingService] })
export class HousekeepingModule {}
