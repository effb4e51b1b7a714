import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks (docs/webhooks.md): endpoints of an organizer or an application, the messages the events
 * domain produced, one delivery per message and endpoint, and every attempt of it (the delivery log).
 */
export class Webhooks1796400000000 implements MigrationInterface {
  name = 'Webhooks1796400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_endpoints (
        id uuid NOT NULL,
        organizer_id uuid,
        application_id uuid,
        url text NOT NULL,
        description text NOT NULL DEFAULT '',
        event_types text[] NOT NULL,
        state text NOT NULL DEFAULT 'active',
        disabled_reason text,
        disabled_at timestamptz,
        secret_sealed text NOT NULL,
        previous_secret_sealed text,
        previous_secret_expires_at timestamptz,
        failing_since timestamptz,
        created_by uuid,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (id),
        CONSTRAINT webhook_endpoints_owner_check CHECK ((organizer_id IS NULL) <> (application_id IS NULL)),
        CONSTRAINT webhook_endpoints_url_check CHECK (char_length(url) <= 2048),
        CONSTRAINT webhook_endpoints_description_check CHECK (char_length(description) <= 500),
        CONSTRAINT webhook_endpoints_event_types_check CHECK (cardinality(event_types) BETWEEN 1 AND 20),
        CONSTRAINT webhook_endpoints_state_check CHECK (state IN ('active', 'paused', 'disabled')),
        CONSTRAINT webhook_endpoints_organizer_id_fkey FOREIGN KEY (organizer_id) REFERENCES organizers (id) ON DELETE CASCADE,
        CONSTRAINT webhook_endpoints_application_id_fkey FOREIGN KEY (application_id) REFERENCES oauth_applications (id) ON DELETE CASCADE,
        CONSTRAINT webhook_endpoints_created_by_fkey FOREIGN KEY (created_by) REFERENCES users (id) ON DELETE SET NULL
      )`);
    await q.query(`CREATE INDEX webhook_endpoints_organizer_id_idx ON webhook_endpoints (organizer_id) WHERE organizer_id IS NOT NULL`);
    await q.query(
      `CREATE INDEX webhook_endpoints_application_id_idx ON webhook_endpoints (application_id) WHERE application_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX webhook_endpoints_created_by_idx ON webhook_endpoints (created_by)`);

    await q.query(`
      CREATE TABLE webhook_messages (
        id uuid NOT NULL,
        event_type text NOT NULL,
        body text NOT NULL,
        created_at timestamptz NOT NULL,
        CONSTRAINT webhook_messages_pkey PRIMARY KEY (id),
        CONSTRAINT webhook_messages_body_check CHECK (char_length(body) <= 65536)
      )`);
    await q.query(`CREATE INDEX webhook_messages_created_at_idx ON webhook_messages (created_at)`);

    await q.query(`
      CREATE TABLE webhook_deliveries (
        id uuid NOT NULL,
        message_id uuid NOT NULL,
        endpoint_id uuid NOT NULL,
        state text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        last_attempt_at timestamptz,
        created_at timestamptz NOT NULL,
        CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id),
        CONSTRAINT webhook_deliveries_message_endpoint_key UNIQUE (message_id, endpoint_id),
        CONSTRAINT webhook_deliveries_state_check CHECK (state IN ('scheduled', 'queued', 'succeeded', 'failed', 'skipped')),
        CONSTRAINT webhook_deliveries_message_id_fkey FOREIGN KEY (message_id) REFERENCES webhook_messages (id) ON DELETE CASCADE,
        CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX webhook_deliveries_endpoint_log_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE state = 'scheduled'`);

    await q.query(`
      CREATE TABLE webhook_attempts (
        id uuid NOT NULL,
        delivery_id uuid NOT NULL,
        number integer NOT NULL,
        trigger text NOT NULL,
        started_at timestamptz NOT NULL,
        duration_ms integer NOT NULL,
        outcome text NOT NULL,
        response_status integer,
        response_body text,
        error text,
        CONSTRAINT webhook_attempts_pkey PRIMARY KEY (id),
        CONSTRAINT webhook_attempts_delivery_number_key UNIQUE (delivery_id, number),
        CONSTRAINT webhook_attempts_trigger_check CHECK (trigger IN ('automatic', 'redelivery', 'test')),
        CONSTRAINT webhook_attempts_outcome_check CHECK (outcome IN ('succeeded', 'failed')),
        CONSTRAINT webhook_attempts_response_body_check CHECK (char_length(response_body) <= 2048),
        CONSTRAINT webhook_attempts_error_check CHECK (char_length(error) <= 500),
        CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries (id) ON DELETE CASCADE
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_attempts`);
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhook_messages`);
    await q.query(`DROP TABLE webhook_endpoints`);
  }
}
