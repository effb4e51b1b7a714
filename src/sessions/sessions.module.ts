import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../users/users.module.js';
import { AssetsController } from '../web/assets.controller.js';
import { SessionEntity } from './session.entity.js';
import { SessionsService } from './sessions.service.js';
import { SignInController } from './sign-in.controller.js';
import { WebSession } from './web-session.js';

/** Browser sessions and the sign-in pages (plus the pages' static assets). */
@Module({
  imports: [TypeOrmModule.forFeature([SessionEntity]), UsersModule],
  providers: [SessionsService, WebSession],
  controllers: [SignInController, AssetsController],
  exports: [WebSession, SessionsService],
})
export class SessionsModule {}
