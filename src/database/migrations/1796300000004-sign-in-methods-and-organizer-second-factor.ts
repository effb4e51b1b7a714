import { MigrationInterface, QueryRunner } from 'typeorm';

const AMR_VALUES = `ARRAY['pwd','otp','hwk','swk','mfa']::text[]`;

/**
 * OpenID Connect says how the user signed in (docs/account-security.md, "For client developers: acr and
 * amr"): the session's `amr` travels with the authorization code, the device authorization's approval and
 * the refresh-token family, so every id_token issued from them carries the original sign-in's methods.
 * Rows from before were all password sign-ins: `{pwd}`. A device authorization gets its `amr` when it is
 * approved (null while pending).
 *
 * A cached credential carries its user's `email_verified` (userinfo answers from it): verifying an address
 * now evicts it too, as a change of the address already did.
 *
 * Organizers can require a second factor of their team (docs/account-security.md, "Organizers that
 * require a second factor"): since when, and the grace period in hours (GitLab's default is 48).
 */
export class SignInMethodsAndOrganizerSecondFactor1796300000004 implements MigrationInterface {
  name = 'SignInMethodsAndOrganizerSecondFactor1796300000004';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['oauth_authorization_codes', 'oauth_refresh_tokens']) {
      await q.query(`ALTER TABLE ${table} ADD COLUMN amr text[] NOT NULL DEFAULT '{pwd}'`);
      await q.query(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_amr_check CHECK (cardinality(amr) >= 1 AND amr <@ ${AMR_VALUES})`);
    }
    await q.query(`ALTER TABLE oauth_device_authorizations ADD COLUMN amr text[]`);
    await q.query(`UPDATE oauth_device_authorizations SET amr = '{pwd}' WHERE user_id IS NOT NULL`);
    await q.query(
      `ALTER TABLE oauth_device_authorizations ADD CONSTRAINT oauth_device_authorizations_amr_check
         CHECK (amr IS NULL OR (cardinality(amr) >= 1 AND amr <@ ${AMR_VALUES}))`,
    );
    await q.query(`DROP TRIGGER users_credential_change ON users`);
    await q.query(`
      CREATE TRIGGER users_credential_change
        AFTER UPDATE OF state, username, name, email, email_verified_at OR DELETE ON users
        FOR EACH ROW EXECUTE FUNCTION agora_notify_credential_change()`);
    await q.query(`ALTER TABLE organizers ADD COLUMN second_factor_required_since timestamptz`);
    await q.query(`ALTER TABLE organizers ADD COLUMN second_factor_grace_hours integer NOT NULL DEFAULT 48`);
    await q.query(
      `ALTER TABLE organizers ADD CONSTRAINT organizers_second_factor_grace_hours_check CHECK (second_factor_grace_hours BETWEEN 0 AND 8760)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE organizers DROP CONSTRAINT organizers_second_factor_grace_hours_check`);
    await q.query(`ALTER TABLE organizers DROP COLUMN second_factor_grace_hours, DROP COLUMN second_factor_required_since`);
    await q.query(`DROP TRIGGER users_credential_change ON users`);
    await q.query(`
      CREATE TRIGGER users_credential_change
        AFTER UPDATE OF state, username, name, email OR DELETE ON users
        FOR EACH ROW EXECUTE FUNCTION agora_notify_credential_change()`);
    for (const table of ['oauth_device_authorizations', 'oauth_refresh_tokens', 'oauth_authorization_codes']) {
      await q.query(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_amr_check`);
      await q.query(`ALTER TABLE ${table} DROP COLUMN amr`);
    }
  }
}
