import { MigrationInterface, QueryRunner } from 'typeorm';

/** Calls to the legacy REST API per credential and day, so operators see who still depends on it. */
export class LegacyApiUsage1763900000001 implements MigrationInterface {
  name = 'LegacyApiUsage1763900000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE legacy_api_usage (
        subject text NOT NULL CONSTRAINT legacy_api_usage_subject_check
          CHECK (subject = 'anonymous' OR subject ~ '^(personal_access_token|oauth_access_token):[0-9a-f-]{36}$'),
        day date NOT NULL,
        user_id uuid,
        calls bigint NOT NULL CONSTRAINT legacy_api_usage_calls_check CHECK (calls > 0),
        last_called_at timestamptz NOT NULL,
        CONSTRAINT legacy_api_usage_pkey PRIMARY KEY (subject, day)
      )`);
    await q.query(`CREATE INDEX legacy_api_usage_day_idx ON legacy_api_usage (day)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE legacy_api_usage`);
  }
}
