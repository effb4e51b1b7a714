import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../users/users.module.js';
import { AssetsController } from '../web/assets.controller.js';
import { SessionEntity } from './session.entity.js';
import { SessionsService } from './sessions.service.js';
import { SignInFailureEntity } from './sign-in-failure.entity.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { SignInController } from './sign-in.controller.js';
import { SignUpController } from './sign-up.controller.js';
import { WebSession } from './web-session.js';

/** Browser sessions and the sign-in pages (plus the pages' static assets). */
@Module({
  imports: [TypeOrmModule.forFeature([SessionEntity, SignInFailureEntity]), UsersModule],
  providers: [SessionsService, WebSession, SignInThrottle],
  controllers: [SignInController, SignUpController, AssetsController],
  exports: [WebSession, SessionsService, SignInThrottle],
})
export class SessionsModule {}
