import { OAuthModule } from '../oauth/oauth.module.js';
import { Module } from '@nestjs/common';
import { MailModule } from '../mail/mail.module.js';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccountLinks } from './account-links.service.js';
import { AccountMailSender } from './account-mail.sender.js';
import { EmailLinksController } from './email-links.controller.js';
import { EmailVerification } from './email-verification.service.js';
import { PasswordChange } from './password-change.service.js';
import { PasswordResetController } from './password-reset.controller.js';
import { PasswordReset } from './password-reset.service.js';
import { SignUpController } from './sign-up.controller.js';
import { SignUpService } from './sign-up.service.js';
import { DatabaseModule } from '../database/database.module.js';
import { JobsModule } from '../jobs/jobs.module.js';

/**
 * What Agora mails to prove an address or reset a password (docs/account-security.md): sign-up that does
 * not tell whether an address has an account, e-mail verification and change of address, password reset
 * (and what a password change ends), their links and their mails.
 */
@Module({
  imports: [JobsModule, DatabaseModule, UsersModule, SessionsModule, SecurityNoticesModule, MailModule, OAuthModule],
  controllers: [SignUpController, EmailLinksController, PasswordResetController],
  providers: [AccountLinks, AccountMailSender, SignUpService, EmailVerification, PasswordReset, PasswordChange],
  exports: [EmailVerification, AccountLinks, PasswordChange],
})
export class AccountLinksModule {}
