/** The states of endpoints and deliveries, and what started an attempt (see the entities). */
export type WebhookEndpointState = 'active' | 'paused' | 'disabled';
export type WebhookDeliveryState = 'scheduled' | 'queued' | 'succeeded' | 'failed' | 'skipped';
export type WebhookAttemptTrigger = 'automatic' | 'redelivery' | 'test';
