import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The browsers each user signed in from (docs/account-security.md, "Security notices"): a sign-in from
 * one not listed tells the user by e-mail. Keyed by the SHA-256 of the browser's device cookie.
 */
export class KnownBrowsers1796300000005 implements MigrationInterface {
  name = 'KnownBrowsers1796300000005';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE known_browsers (
        user_id uuid NOT NULL,
        device_hash text NOT NULL,
        browser text NOT NULL,
        first_seen_at timestamptz NOT NULL,
        last_seen_at timestamptz NOT NULL,
        CONSTRAINT known_browsers_pkey PRIMARY KEY (user_id, device_hash),
        CONSTRAINT known_browsers_device_hash_check CHECK (device_hash ~ '^[0-9a-f]{64}$'),
        CONSTRAINT known_browsers_browser_check CHECK (char_length(browser) <= 100),
        CONSTRAINT known_browsers_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX known_browsers_last_seen_at_idx ON known_browsers (last_seen_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE known_browsers`);
  }
}
