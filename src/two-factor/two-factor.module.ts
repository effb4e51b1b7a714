import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { UsersModule } from '../users/users.module.js';
import { RecoveryCodeEntity } from './recovery-code.entity.js';
import { RecoveryCodes } from './recovery-codes.service.js';
import { SecondFactorController } from './second-factor.controller.js';
import { TotpService } from './totp.service.js';
import { DatabaseModule } from '../database/database.module.js';

/**
 * Two-factor authentication (docs/account-security.md): the authenticator app (TOTP), recovery codes,
 * and the second step of signing in. The security page's section and forms are in the dashboard.
 */
@Module({
  imports: [DatabaseModule, TypeOrmModule.forFeature([RecoveryCodeEntity]), SessionsModule, UsersModule, SecurityNoticesModule],
  providers: [TotpService, RecoveryCodes],
  controllers: [SecondFactorController],
  exports: [TotpService, RecoveryCodes],
})
export class TwoFactorModule {}
