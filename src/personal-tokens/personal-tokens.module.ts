import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { PersonalTokenEntity } from './personal-token.entity.js';
import { PersonalTokensService } from './personal-tokens.service.js';
import { UsersModule } from '../users/users.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { DatabaseModule } from '../database/database.module.js';

@Module({
  imports: [DatabaseModule, TypeOrmModule.forFeature([PersonalTokenEntity]), SecurityNoticesModule, UsersModule, AuthModule],
  providers: [PersonalTokensService],
  exports: [PersonalTokensService],
})
export class PersonalTokensModule {}
