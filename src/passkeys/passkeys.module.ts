import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { TwoFactorModule } from '../two-factor/two-factor.module.js';
import { UsersModule } from '../users/users.module.js';
import { PasskeyEntity } from './passkey.entity.js';
import { PasskeyOffers } from './passkey-offers.js';
import { PasskeySettingsController } from './passkey-settings.controller.js';
import { PasskeySignInController } from './passkey-sign-in.controller.js';
import { PasskeysService } from './passkeys.service.js';
import { WebAuthnChallengeEntity } from './webauthn-challenge.entity.js';
import { WebAuthnChallenges } from './webauthn-challenges.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { DatabaseModule } from '../database/database.module.js';

/**
 * Passkeys (WebAuthn, docs/account-security.md "Passkeys"): adding, naming and removing them on the
 * security page, signing in with one alone, and the challenges of those ceremonies.
 */
@Module({
  imports: [
    DatabaseModule,
    TypeOrmModule.forFeature([PasskeyEntity, WebAuthnChallengeEntity]),
    SessionsModule,
    UsersModule,
    SecurityNoticesModule,
    TwoFactorModule,
    MetricsModule,
  ],
  providers: [PasskeysService, WebAuthnChallenges, PasskeyOffers],
  controllers: [PasskeySettingsController, PasskeySignInController],
  exports: [PasskeysService],
})
export class PasskeysModule {}
