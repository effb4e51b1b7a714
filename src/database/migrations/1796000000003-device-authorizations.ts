import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The OAuth device authorization grant (RFC 8628): device authorizations, and wrong user codes counted
 * in `sign_in_failures` per user (`device-user:`) and per address (`device-ip:`) to slow down guessing.
 */
export class DeviceAuthorizations1796000000003 implements MigrationInterface {
  name = 'DeviceAuthorizations1796000000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE oauth_device_authorizations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        device_code_hash text NOT NULL CONSTRAINT oauth_device_authorizations_device_code_hash_key UNIQUE
          CONSTRAINT oauth_device_authorizations_device_code_hash_check CHECK (device_code_hash ~ '^[0-9a-f]{64}$'),
        user_code_hash text NOT NULL CONSTRAINT oauth_device_authorizations_user_code_hash_key UNIQUE
          CONSTRAINT oauth_device_authorizations_user_code_hash_check CHECK (user_code_hash ~ '^[0-9a-f]{64}$'),
        application_id uuid NOT NULL CONSTRAINT oauth_device_authorizations_application_id_fkey REFERENCES oauth_applications (id) ON DELETE CASCADE,
        scopes text[] NOT NULL,
        status text NOT NULL DEFAULT 'pending'
          CONSTRAINT oauth_device_authorizations_status_check CHECK (status IN ('pending', 'approved', 'denied')),
        user_id uuid CONSTRAINT oauth_device_authorizations_user_id_fkey REFERENCES users (id) ON DELETE CASCADE,
        auth_time timestamptz,
        interval_seconds integer NOT NULL CONSTRAINT oauth_device_authorizations_interval_seconds_check CHECK (interval_seconds > 0),
        last_polled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        decided_at timestamptz,
        consumed_at timestamptz,
        access_token_id uuid CONSTRAINT oauth_device_authorizations_access_token_id_fkey REFERENCES oauth_access_tokens (id) ON DELETE SET NULL
      )`);
    await q.query(`CREATE INDEX oauth_device_authorizations_expires_at_idx ON oauth_device_authorizations (expires_at)`);

    await q.query(`ALTER TABLE sign_in_failures DROP CONSTRAINT sign_in_failures_subject_check`);
    await q.query(
      `ALTER TABLE sign_in_failures ADD CONSTRAINT sign_in_failures_subject_check CHECK (subject ~ '^(login|ip|signup|signup-failed|device-user|device-ip):[0-9a-f]{64}$')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM sign_in_failures WHERE subject LIKE 'device-%'`);
    await q.query(`ALTER TABLE sign_in_failures DROP CONSTRAINT sign_in_failures_subject_check`);
    await q.query(
      `ALTER TABLE sign_in_failures ADD CONSTRAINT sign_in_failures_subject_check CHECK (subject ~ '^(login|ip|signup|signup-failed):[0-9a-f]{64}$')`,
    );
    await q.query(`DROP TABLE oauth_device_authorizations`);
  }
}
