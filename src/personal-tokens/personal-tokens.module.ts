import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { PersonalTokenEntity } from './personal-token.entity.js';
import { PersonalTokensService } from './personal-tokens.service.js';
import { UsersModule } from '../users/users.module.js';

@Module({
  imports: [TypeOrmModule.forFeature([PersonalTokenEntity]), SecurityNoticesModule, UsersModule],
  providers: [PersonalTokensService],
  exports: [PersonalTokensService],
})
export class PersonalTokensModule {}
