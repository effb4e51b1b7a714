import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../users/users.module.js';
import { PageGuard } from '../web/page.guard.js';
import { SessionEntity } from './session.entity.js';
import { SessionsService } from './sessions.service.js';
import { SignInFailureEntity } from './sign-in-failure.entity.js';
import { ReturnOrigins } from './return-origins.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { SignInController } from './sign-in.controller.js';
import { SignUpController } from './sign-up.controller.js';
import { WebSession } from './web-session.js';

/** Browser sessions, the sign-in pages, and the pages' guard (who is signed in, CSRF). */
@Module({
  imports: [TypeOrmModule.forFeature([SessionEntity, SignInFailureEntity]), UsersModule],
  providers: [SessionsService, WebSession, SignInThrottle, ReturnOrigins, { provide: APP_GUARD, useClass: PageGuard }],
  controllers: [SignInController, SignUpController],
  exports: [WebSession, SessionsService, SignInThrottle],
})
export class SessionsModule {}
