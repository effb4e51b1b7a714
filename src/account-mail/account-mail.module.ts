import { Module } from '@nestjs/common';
import { MailModule } from '../mail/mail.module.js';
import { UsersModule } from '../users/users.module.js';
import { SecurityNoticeSender } from './security-notice-sender.js';
import { JobsModule } from '../jobs/jobs.module.js';

/**
 * Mail about the account itself: the security notices (SecurityNotices, src/security-notices/) become
 * mails in jobs. docs/account-security.md, "Security notices"; docs/mail.md.
 */
@Module({
  imports: [JobsModule, MailModule, UsersModule],
  providers: [SecurityNoticeSender],
})
export class AccountMailModule {}
