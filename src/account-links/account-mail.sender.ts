import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import type { JobContext } from '../jobs/job-kind.js';
import { JobQueue } from '../jobs/job-queue.js';
import { Mailer } from '../mail/mailer.js';
import { renderAccountMail } from '../mail/messages/account-mail.js';
import { UsersService } from '../users/users.service.js';
import { AccountLinks } from './account-links.service.js';
import { ACCOUNT_MAIL, AccountMailJob } from './account-mail.job.js';
import { PasswordReset } from './password-reset.service.js';

/**
 * Sends the account mails (ACCOUNT_MAIL jobs). A link is read as it is when the job runs: one used,
 * replaced or expired meanwhile is not sent. The token is computed here, from the link's row and SECRET_KEY.
 */
@Injectable()
export class AccountMailSender implements OnModuleInit {
  private readonly logger = new Logger('AccountMail');

  constructor(
    private readonly jobs: JobQueue,
    private readonly links: AccountLinks,
    private readonly users: UsersService,
    private readonly resets: PasswordReset,
    private readonly mailer: Mailer,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.jobs.handle(ACCOUNT_MAIL, (data, job) => this.send(data, job));
  }

  async send(data: AccountMailJob, job: JobContext): Promise<void> {
    if (data.kind === 'reset-request') {
      await this.resets.mailLink(data.email);
      return;
    }
    if (data.kind === 'sign-up-attempt') {
      const user = await this.users.findById(data.userId);
      if (!user || user.state !== 'active') return;
      const rendered = renderAccountMail({
        kind: 'sign-up-attempt',
        recipient: user,
        username: user.username,
        signInUrl: `${this.config.baseUrl}/sign-in`,
        resetUrl: `${this.config.baseUrl}/forgot-password`,
      });
      await this.mailer.send({ ...rendered, to: address(user.name, user.email), messageId: job.id });
      return;
    }
    const link = await this.links.byId(data.linkId);
    if (!link || link.usedAt || link.expiresAt <= this.clock.now()) {
      this.logger.debug(`Account mail ${job.id} not sent: the link was used, replaced or expired meanwhile`);
      return;
    }
    const user = await this.users.findById(link.userId);
    if (!user || user.state !== 'active') return;
    const rendered = renderAccountMail({
      kind: link.purpose,
      recipient: { name: user.name, email: link.email },
      username: user.username,
      url: this.links.url(link),
    });
    await this.mailer.send({ ...rendered, to: address(user.name, link.email), messageId: job.id });
  }
}

/** `"Name" <address>`, as the other mails write it. */
function address(name: string, email: string): string {
  return `"${name.replace(/["\\\r\n]/g, ' ')}" <${email}>`;
}
