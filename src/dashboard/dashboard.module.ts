import { Module } from '@nestjs/common';
import { PersonalTokensModule } from '../personal-tokens/personal-tokens.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { AccountController } from './account.controller.js';

/** The dashboard pages for signed-in users. */
@Module({ imports: [SessionsModule, PersonalTokensModule], controllers: [AccountController] })
export class DashboardModule {}
