import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { UsersModule } from '../users/users.module.js';
import { PageGuard } from '../web/page.guard.js';
import { PageSessions } from '../web/page-sessions.js';
import { KnownBrowsers } from './known-browsers.js';
import { SessionEntity } from './session.entity.js';
import { SessionsService } from './sessions.service.js';
import { CountedAttemptEntity } from './counted-attempt.entity.js';
import { ReturnOrigins } from './return-origins.js';
import { SessionEndings } from './session-endings.js';
import { AttemptThrottle } from './attempt-throttle.js';
import { PendingSignInEntity } from './pending-sign-in.entity.js';
import { SignInSteps } from './sign-in-steps.js';
import { SignInController } from './sign-in.controller.js';
import { WebSession } from './web-session.js';
import { SignInOffers } from './sign-in-offers.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { WebModule } from '../web/web.module.js';
import { DatabaseModule } from '../database/database.module.js';

/** Browser sessions, the sign-in pages, and the pages' guard (who is signed in, CSRF). Sign-up is AccountLinksModule's. */
@Module({
  imports: [
    DatabaseModule,
    TypeOrmModule.forFeature([SessionEntity, CountedAttemptEntity, PendingSignInEntity]),
    UsersModule,
    SecurityNoticesModule,
    MetricsModule,
    WebModule,
  ],
  providers: [
    SessionsService,
    WebSession,
    KnownBrowsers,
    AttemptThrottle,
    ReturnOrigins,
    SessionEndings,
    SignInSteps,
    SignInOffers,
    { provide: PageSessions, useExisting: SessionsService },
    { provide: APP_GUARD, useClass: PageGuard },
  ],
  controllers: [SignInController],
  exports: [WebSession, SessionsService, AttemptThrottle, KnownBrowsers, SignInSteps, ReturnOrigins, SessionEndings, SignInOffers],
})
export class SessionsModule {}
