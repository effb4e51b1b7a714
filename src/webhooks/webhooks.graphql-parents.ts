import type * as G from '../generated/graphql.js';
import type { WebhookDelivery, WebhookEndpoint } from './webhook-endpoints.service.js';

/**
 * The parent types of the webhook GraphQL objects (scripts/codegen.mjs, `mappers`). The generated
 * resolver types import this file, so it imports the schema's types only (`src/generated/graphql.ts`).
 */

/** The model under a GraphQL webhook object, for its field resolvers. */
export const WEBHOOK_MODEL = Symbol('webhook-model');

export type GqlWebhookEndpoint = Omit<WebhookEndpoint, 'eventTypes' | 'state'> &
  Pick<G.WebhookEndpoint, 'eventTypes' | 'state'> & { [WEBHOOK_MODEL]: WebhookEndpoint };

export type GqlWebhookDelivery = Omit<WebhookDelivery, 'state' | 'attempts'> &
  Pick<G.WebhookDelivery, 'state' | 'attemptCount'> & { [WEBHOOK_MODEL]: WebhookDelivery };
