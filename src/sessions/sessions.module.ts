import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { UsersModule } from '../users/users.module.js';
import { PageGuard } from '../web/page.guard.js';
import { KnownBrowsers } from './known-browsers.js';
import { SessionEntity } from './session.entity.js';
import { SessionsService } from './sessions.service.js';
import { SignInFailureEntity } from './sign-in-failure.entity.js';
import { ReturnOrigins } from './return-origins.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { PendingSignInEntity } from './pending-sign-in.entity.js';
import { SignInSteps } from './sign-in-steps.js';
import { SignInController } from './sign-in.controller.js';
import { WebSession } from './web-session.js';
import { SignInOffers } from './sign-in-offers.js';

/** Browser sessions, the sign-in pages, and the pages' guard (who is signed in, CSRF). Sign-up is AccountLinksModule's. */
@Module({
  imports: [TypeOrmModule.forFeature([SessionEntity, SignInFailureEntity, PendingSignInEntity]), UsersModule, SecurityNoticesModule],
  providers: [
    SessionsService,
    WebSession,
    KnownBrowsers,
    SignInThrottle,
    ReturnOrigins,
    SignInSteps,
    SignInOffers,
    { provide: APP_GUARD, useClass: PageGuard },
  ],
  controllers: [SignInController],
  exports: [WebSession, SessionsService, SignInThrottle, KnownBrowsers, SignInSteps, ReturnOrigins, SignInOffers],
})
export class SessionsModule {}
