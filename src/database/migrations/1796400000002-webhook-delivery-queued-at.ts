import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook repairs after review (docs/webhooks.md):
 * - webhook_deliveries.queued_at: when the delivery last became `queued` (Clock time). A delivery queued
 *   for longer than its attempt job can live (its job used up its retries) is queued again by the sweeper
 *   and may be taken over by a redelivery, instead of staying `queued` for ever.
 * - webhook_messages.organizer_id, event_id, user_id: what a domain event's message is about, so that an
 *   attempt to an application's endpoint can check again that a live grant still covers it (test
 *   messages, and messages older than this migration, have none).
 * - webhook_endpoints.last_failed_at: the endpoint's latest failed attempt; a failure long after the one
 *   before starts a new failure streak (failing_since), so only continuous failure disables.
 */
export class WebhookDeliveryQueuedAt1796400000002 implements MigrationInterface {
  name = 'WebhookDeliveryQueuedAt1796400000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN queued_at timestamptz`);
    await q.query(`UPDATE webhook_deliveries SET queued_at = created_at WHERE state = 'queued'`);
    await q.query(`CREATE INDEX webhook_deliveries_queued_idx ON webhook_deliveries (queued_at) WHERE state = 'queued'`);
    await q.query(`ALTER TABLE webhook_messages ADD COLUMN organizer_id uuid, ADD COLUMN event_id uuid, ADD COLUMN user_id uuid`);
    await q.query(`ALTER TABLE webhook_endpoints ADD COLUMN last_failed_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_endpoints DROP COLUMN last_failed_at`);
    await q.query(`ALTER TABLE webhook_messages DROP COLUMN organizer_id, DROP COLUMN event_id, DROP COLUMN user_id`);
    await q.query(`DROP INDEX webhook_deliveries_queued_idx`);
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN queued_at`);
  }
}
