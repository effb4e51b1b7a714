import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Announces every change that can invalidate a credential on the `agora_credentials` channel, whoever
 * makes it (an instance, the CLI, an operator's SQL), so each instance's credential cache evicts it.
 * The payload is `<table>:<id>`.
 */
export class CredentialChangeNotifications1763800000001 implements MigrationInterface {
  name = 'CredentialChangeNotifications1763800000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION agora_notify_credential_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('agora_credentials', TG_TABLE_NAME || ':' || OLD.id::text);
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE TRIGGER users_credential_change
        AFTER UPDATE OF state, username, name, email OR DELETE ON users
        FOR EACH ROW EXECUTE FUNCTION agora_notify_credential_change()`);
    await q.query(`
      CREATE TRIGGER personal_access_tokens_credential_change
        AFTER UPDATE OF revoked_at, expires_at, scopes OR DELETE ON personal_access_tokens
        FOR EACH ROW EXECUTE FUNCTION agora_notify_credential_change()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER personal_access_tokens_credential_change ON personal_access_tokens`);
    await q.query(`DROP TRIGGER users_credential_change ON users`);
    await q.query(`DROP FUNCTION agora_notify_credential_change()`);
  }
}
