import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * OAuth clients are cached like tokens (the token endpoint authenticates one on every request), so any
 * change to an application, by an instance, the CLI or an operator's SQL, is announced on the
 * `agora_credentials` channel as `oauth_applications:<id>` and evicts it on every instance.
 */
export class ClientChangeNotifications1763900000003 implements MigrationInterface {
  name = 'ClientChangeNotifications1763900000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TRIGGER oauth_applications_credential_change
        AFTER UPDATE OR DELETE ON oauth_applications
        FOR EACH ROW EXECUTE FUNCTION agora_notify_credential_change()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER oauth_applications_credential_change ON oauth_applications`);
  }
}
