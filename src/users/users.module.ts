import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PasswordHasher } from './password-hasher.js';
import { UserEntity } from './user.entity.js';
import { UsersService } from './users.service.js';
import { UsersResolver } from './users.resolver.js';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { SecondFactorReset } from './second-factor-reset.js';
import { SecondFactors } from './second-factors.js';
import { AuthModule } from '../auth/auth.module.js';
import { DatabaseModule } from '../database/database.module.js';

@Module({
  imports: [DatabaseModule, TypeOrmModule.forFeature([UserEntity]), SecurityNoticesModule, AuthModule],
  providers: [UsersService, PasswordHasher, UsersResolver, SecondFactors, SecondFactorReset],
  exports: [UsersService, SecondFactors, SecondFactorReset, PasswordHasher],
})
export class UsersModule {}
