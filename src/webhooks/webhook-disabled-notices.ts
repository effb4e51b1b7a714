import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { OrganizersService } from '../events/organizers.service.js';
import type { JobContext } from '../jobs/job-kind.js';
import { JobQueue } from '../jobs/job-queue.js';
import { Mailer } from '../mail/mailer.js';
import { ApplicationsService } from '../oauth/clients/applications.service.js';
import { UsersService } from '../users/users.service.js';
import { renderWebhookDisabledMail } from '../mail/messages/webhook-mail.js';
import { WebhookEndpointEntity } from './webhook-endpoint.entity.js';
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
    @InjectRepository(WebhookEndpointEntity) private readonly endpoints: Repository<WebhookEndpointEntity>,
    private readonly mailer: Mailer,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly organizers: OrganizersService,
    private readonly applications: ApplicationsService,
    private readonly users: UsersService,
  ) {}

  onModuleInit(): void {
    this.jobs.handle(WEBHOOK_NOTICES, (notice, job) => this.send(notice, job));
  }

  async send(notice: WebhookDisabledNotice, job: JobContext): Promise<void> {
    const endpoint = await this.endpoints.findOne({
      where: { id: notice.endpointId },
      select: {
        id: true,
        url: true,
        description: true,
        state: true,
        disabledReason: true,
        disabledAt: true,
        organizerId: true,
        applicationId: true,
      },
    });
    const disabledAt = endpoint?.disabledAt ?? null;
    const user =
      endpoint?.state === 'disabled' && disabledAt?.toISOString() === notice.disabledAt ? await this.users.findById(notice.userId) : null;
    if (!endpoint || !disabledAt || user?.state !== 'active') {
      this.logger.debug(`Notice ${job.id} (webhook.disabled) not sent: no longer true`);
      return;
    }
    const owner = endpoint.organizerId
      ? await this.organizers.nameOf(endpoint.organizerId)
      : endpoint.applicationId
        ? ((await this.applications.ownership({ id: endpoint.applicationId }))?.name ?? null)
        : null;
    const rendered = renderWebhookDisabledMail({
      recipient: { name: user.name, email: user.email },
      owner: owner ?? '',
      url: endpoint.url,
      description: endpoint.description,
      reason: endpoint.disabledReason ?? '',
      disabledAt,
      endpointPage: new URL(`/webhooks/${notice.endpointId}`, this.config.baseUrl).toString(),
    });
    // The job's id: every attempt sends the same Message-ID, so a mail system can tell a repeat.
    await this.mailer.send({ ...rendered, to: `"${user.name.replace(/["\\\r\n]/g, ' ')}" <${user.email}>`, messageId: job.id });
  }
}
