import type * as G from '../generated/graphql.js';
import type { DomainEventType } from '../events/domain-events.js';
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from './webhook-endpoints.service.js';
import { WEBHOOK_MODEL, type GqlWebhookDelivery, type GqlWebhookEndpoint } from './webhooks.graphql-parents.js';

/** `registration.created` ⇄ `REGISTRATION_CREATED`: the first dot is the first underscore. */
export const toGqlEventType = (type: DomainEventType): G.WebhookEventType => type.replace('.', '_').toUpperCase() as G.WebhookEventType;
export const fromGqlEventType = (type: G.WebhookEventType): DomainEventType => type.toLowerCase().replace('_', '.') as DomainEventType;

export function toGqlWebhookEndpoint(endpoint: WebhookEndpoint): GqlWebhookEndpoint {
  return {
    ...endpoint,
    eventTypes: endpoint.eventTypes.map(toGqlEventType),
    state: endpoint.state.toUpperCase() as G.WebhookEndpointState,
    [WEBHOOK_MODEL]: endpoint,
  };
}

export function toGqlWebhookDelivery(delivery: WebhookDelivery): GqlWebhookDelivery {
  const { attempts, ...rest } = delivery;
  return {
    ...rest,
    state: delivery.state.toUpperCase() as G.WebhookDeliveryState,
    attemptCount: attempts,
    [WEBHOOK_MODEL]: delivery,
  };
}

export function toGqlWebhookAttempt(attempt: WebhookAttempt): G.WebhookAttempt {
  return {
    ...attempt,
    trigger: attempt.trigger.toUpperCase() as G.WebhookAttemptTrigger,
    outcome: attempt.outcome.toUpperCase() as G.WebhookAttemptOutcome,
  };
}
