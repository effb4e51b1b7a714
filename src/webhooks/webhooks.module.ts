import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../events/events.module.js';
import { MailModule } from '../mail/mail.module.js';
import { OAuthModule } from '../oauth/oauth.module.js';
import { UsersModule } from '../users/users.module.js';
import { BackchannelLogoutTransport } from './backchannel-logout-transport.js';
import { WebhookAttempts } from './webhook-attempts.js';
import { WebhookDisabledNotices } from './webhook-disabled-notices.js';
import { WebhookDispatch } from './webhook-dispatch.js';
import { WebhookEndpointEntity } from './webhook-endpoint.entity.js';
import { WebhookEndpointsService } from './webhook-endpoints.service.js';
import { WebhookFanOutHandler } from './webhook-fan-out.js';
import { WebhookSweeper } from './webhook-sweeper.js';
import { WebhookUpkeep } from './webhook-upkeep.js';
import { OrganizerWebhooksResolver, WebhookDeliveriesResolver, WebhookEndpointsResolver } from './webhooks.resolver.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { RateLimitsModule } from '../rate-limits/rate-limits.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { JobsModule } from '../jobs/jobs.module.js';

/**
 * Webhooks (docs/webhooks.md): endpoints of organizers and applications, the fan-out of what the events
 * domain wrote to its outbox (WebhookOutbox), signed deliveries (Standard Webhooks) with retries, the
 * delivery log, and a client that refuses server-side request forgery.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([WebhookEndpointEntity]),
    JobsModule,
    DatabaseModule,
    EventsModule,
    MailModule,
    OAuthModule,
    UsersModule,
    MetricsModule,
    RateLimitsModule,
  ],
  providers: [
    WebhookEndpointsService,
    WebhookDispatch,
    WebhookEndpointsResolver,
    WebhookDeliveriesResolver,
    OrganizerWebhooksResolver,
    WebhookFanOutHandler,
    WebhookAttempts,
    WebhookSweeper,
    WebhookDisabledNotices,
    WebhookUpkeep,
    BackchannelLogoutTransport,
  ],
  exports: [WebhookEndpointsService, WebhookDispatch, WebhookUpkeep],
})
export class WebhooksModule {}
