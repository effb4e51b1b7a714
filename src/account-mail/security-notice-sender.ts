import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import type { JobContext } from '../jobs/job-kind.js';
import { JobQueue } from '../jobs/job-queue.js';
import { Mailer } from '../mail/mailer.js';
import { renderSecurityMail } from '../mail/messages/security-mail.js';
import { SECURITY_NOTICES, type SecurityNoticeJob } from '../security-notices/security-notices.js';
import { UsersService } from '../users/users.service.js';

/**
 * Sends the security notices (SecurityNotices.notify): one mail per notice, to the user's address as it is
 * when the job runs, or to `to` (the old address, on a change). Runs in jobs only.
 *
 * A deleted user gets nothing (there is no account left to protect). A blocked one still does, as GitHub
 * writes to suspended accounts: a notice is about the account's safety, not an invitation to use it.
 */
@Injectable()
export class SecurityNoticeSender implements OnModuleInit {
  private readonly logger = new Logger('SecurityNotices');

  constructor(
    private readonly jobs: JobQueue,
    private readonly users: UsersService,
    private readonly mailer: Mailer,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.jobs.handle(SECURITY_NOTICES, (job, context) => this.send(job, context));
  }

  async send(job: SecurityNoticeJob, context: JobContext): Promise<void> {
    const user = await this.users.findById(job.userId);
    if (!user) {
      this.logger.debug(`Notice ${context.id} (${job.notice.kind}) not sent: the user no longer exists`);
      return;
    }
    const address = job.to ?? user.email;
    const page = (path: string) => new URL(path, this.config.baseUrl).toString();
    const rendered = renderSecurityMail({
      recipient: { name: user.name, email: address },
      username: user.username,
      notice: job.notice,
      // Jobs written before `at` was recorded: the time of sending is the best there is.
      at: job.at ? new Date(job.at) : this.clock.now(),
      links: {
        security: page('/account/security'),
        resetPassword: page('/forgot-password'),
        tokens: page('/account#tokens'),
        applications: page('/account/authorized'),
      },
    });
    // The job's id: every attempt sends the same Message-ID, so a mail system can tell a repeat.
    await this.mailer.send({ ...rendered, to: formatAddress(user.name, address), messageId: context.id });
  }
}

/** `"Name" <address>`, the name quoted by the mail library (nodemailer) when the mail is built. */
function formatAddress(name: string, address: string): string {
  return `"${name.replace(/["\\\r\n]/g, ' ')}" <${address}>`;
}
