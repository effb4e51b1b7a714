import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module.js';
import { MailModule } from '../mail/mail.module.js';
import { UsersModule } from '../users/users.module.js';
import { WebhookAttempts } from './webhook-attempts.js';
import { WebhookDisabledNotices } from './webhook-disabled-notices.js';
import { WebhookDispatch } from './webhook-dispatch.js';
import { WebhookEndpointsService } from './webhook-endpoints.service.js';
import { WebhookFanOutHandler } from './webhook-fan-out.js';
import { WebhookSweeper } from './webhook-sweeper.js';
import { WebhookUpkeep } from './webhook-upkeep.js';
import { OrganizerWebhooksResolver, WebhookDeliveriesResolver, WebhookEndpointsResolver } from './webhooks.resolver.js';

/**
 * Webhooks (docs/webhooks.md): endpoints of organizers and applications, the fan-out of what the events
 * domain wrote to its outbox (WebhookOutbox), signed deliveries (Standard Webhooks) with retries, the
 * delivery log, and a client that refuses server-side request forgery.
 */
@Module({
  imports: [EventsModule, MailModule, UsersModule],
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
  ],
  exports: [WebhookEndpointsService, WebhookDispatch, WebhookUpkeep],
})
export class WebhooksModule {}
