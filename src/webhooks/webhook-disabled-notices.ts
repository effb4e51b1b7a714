import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import type { JobContext } from '../jobs/job-kind.js';
import { JobQueue } from '../jobs/job-queue.js';
import { Mailer } from '../mail/mailer.js';
import { renderWebhookDisabledMail } from '../mail/messages/webhook-mail.js';
import { WEBHOOK_NOTICES, type WebhookDisabledNotice } from './webhook-jobs.js';

/**
 * Tells one person who manages an endpoint that the service disabled it (WEBHOOK_NOTICES, enqueued with
 * the disabling). Not sent when the endpoint is gone, active again, or was disabled again since.
 */
@Injectable()
export class WebhookDisabledNotices implements OnModuleInit {
  private readonly logger = new Logger('Webhooks');

  constructor(
    private readonly jobs: JobQueue,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly mailer: Mailer,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.jobs.handle(WEBHOOK_NOTICES, (notice, job) => this.send(notice, job));
  }

  async send(notice: WebhookDisabledNotice, job: JobContext): Promise<void> {
    const [row] = (await this.dataSource.query(
      `SELECT w.url, w.description, w.state, w.disabled_reason, w.disabled_at,
              coalesce(o.name, a.name) AS owner, u.name AS user_name, u.email, u.state AS user_state
         FROM webhook_endpoints w
         LEFT JOIN organizers o ON o.id = w.organizer_id
         LEFT JOIN oauth_applications a ON a.id = w.application_id
         JOIN users u ON u.id = $2
        WHERE w.id = $1`,
      [notice.endpointId, notice.userId],
    )) as {
      url: string;
      description: string;
      state: string;
      disabled_reason: string | null;
      disabled_at: Date | string | null;
      owner: string;
      user_name: string;
      email: string;
      user_state: string;
    }[];
    const disabledAt = row?.disabled_at ? new Date(row.disabled_at) : null;
    if (!row || row.state !== 'disabled' || disabledAt?.toISOString() !== notice.disabledAt || row.user_state !== 'active') {
      this.logger.debug(`Notice ${job.id} (webhook.disabled) not sent: no longer true`);
      return;
    }
    const rendered = renderWebhookDisabledMail({
      recipient: { name: row.user_name, email: row.email },
      owner: row.owner,
      url: row.url,
      description: row.description,
      reason: row.disabled_reason ?? '',
      disabledAt,
      endpointPage: new URL(`/webhooks/${notice.endpointId}`, this.config.baseUrl).toString(),
    });
    // The job's id: every attempt sends the same Message-ID, so a mail system can tell a repeat.
    await this.mailer.send({ ...rendered, to: `"${row.user_name.replace(/["\\\r\n]/g, ' ')}" <${row.email}>`, messageId: job.id });
  }
}
