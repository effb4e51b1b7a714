import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Service accounts (docs/oauth.md, "Service accounts and client_credentials"):
 * - oauth_applications.organizer_id: the organizer a service account acts for; such an application is
 *   confidential, owned by no user, has no redirect URIs, and only `api`/`read_api` scopes. It goes with
 *   its organizer.
 * - oauth_access_tokens.user_id may be null: a `client_credentials` token acts for no person.
 */
export class ServiceAccounts1796500000200 implements MigrationInterface {
  name = 'ServiceAccounts1796500000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_applications ADD COLUMN organizer_id uuid`);
    await q.query(
      `ALTER TABLE oauth_applications ADD CONSTRAINT oauth_applications_organizer_id_fkey
         FOREIGN KEY (organizer_id) REFERENCES organizers(id) ON DELETE CASCADE`,
    );
    await q.query(`CREATE INDEX oauth_applications_organizer_id_idx ON oauth_applications (organizer_id) WHERE organizer_id IS NOT NULL`);
    await q.query(`ALTER TABLE oauth_applications DROP CONSTRAINT oauth_applications_redirect_uris_check`);
    await q.query(
      `ALTER TABLE oauth_applications ADD CONSTRAINT oauth_applications_redirect_uris_check
         CHECK (CASE WHEN organizer_id IS NULL THEN cardinality(redirect_uris) BETWEEN 1 AND 10 ELSE cardinality(redirect_uris) = 0 END)`,
    );
    await q.query(
      `ALTER TABLE oauth_applications ADD CONSTRAINT oauth_applications_service_account_check
         CHECK (organizer_id IS NULL OR (client_type = 'confidential' AND owner_id IS NULL AND scopes <@ ARRAY['api', 'read_api']::text[]))`,
    );
    await q.query(`ALTER TABLE oauth_access_tokens ALTER COLUMN user_id DROP NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM oauth_access_tokens WHERE user_id IS NULL`);
    await q.query(`ALTER TABLE oauth_access_tokens ALTER COLUMN user_id SET NOT NULL`);
    await q.query(`DELETE FROM oauth_applications WHERE organizer_id IS NOT NULL`);
    await q.query(`ALTER TABLE oauth_applications DROP CONSTRAINT oauth_applications_service_account_check`);
    await q.query(`ALTER TABLE oauth_applications DROP CONSTRAINT oauth_applications_redirect_uris_check`);
    await q.query(
      `ALTER TABLE oauth_applications ADD CONSTRAINT oauth_applications_redirect_uris_check CHECK (cardinality(redirect_uris) BETWEEN 1 AND 10)`,
    );
    await q.query(`DROP INDEX oauth_applications_organizer_id_idx`);
    await q.query(`ALTER TABLE oauth_applications DROP CONSTRAINT oauth_applications_organizer_id_fkey`);
    await q.query(`ALTER TABLE oauth_applications DROP COLUMN organizer_id`);
  }
}
