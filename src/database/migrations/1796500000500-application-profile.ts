import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An application's homepage (`client_uri`), logo (`logo_uri`, https only) and description, each
 * optional and capped at 500 characters: what users see beside its name and owner on the consent page.
 */
export class ApplicationProfile1796500000500 implements MigrationInterface {
  name = 'ApplicationProfile1796500000500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_applications ADD COLUMN client_uri text, ADD COLUMN logo_uri text, ADD COLUMN description text`);
    await q.query(`ALTER TABLE oauth_applications ADD CONSTRAINT oauth_applications_client_uri_check CHECK (length(client_uri) <= 500)`);
    await q.query(
      `ALTER TABLE oauth_applications ADD CONSTRAINT oauth_applications_logo_uri_check CHECK (length(logo_uri) <= 500 AND logo_uri LIKE 'https://%')`,
    );
    await q.query(`ALTER TABLE oauth_applications ADD CONSTRAINT oauth_applications_description_check CHECK (length(description) <= 500)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_applications DROP CONSTRAINT oauth_applications_description_check`);
    await q.query(`ALTER TABLE oauth_applications DROP CONSTRAINT oauth_applications_logo_uri_check`);
    await q.query(`ALTER TABLE oauth_applications DROP CONSTRAINT oauth_applications_client_uri_check`);
    await q.query(`ALTER TABLE oauth_applications DROP COLUMN description, DROP COLUMN logo_uri, DROP COLUMN client_uri`);
  }
}
