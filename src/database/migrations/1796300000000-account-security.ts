import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ground of account security (docs/account-security.md): how each browser session signed in (`amr`),
 * whether the e-mail address was verified, a time-based one-time password (its secret sealed under
 * SECRET_KEY), recovery codes (hashed) and passkeys (WebAuthn credentials). The throttle's subjects are
 * no longer listed one by one in a check: each new throttle (second step, reset, verification mail) adds
 * a kind of its own.
 */
export class AccountSecurity1796300000000 implements MigrationInterface {
  name = 'AccountSecurity1796300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions ADD COLUMN amr text[] NOT NULL DEFAULT '{pwd}'`);
    await q.query(
      `ALTER TABLE sessions ADD CONSTRAINT sessions_amr_check CHECK (cardinality(amr) >= 1 AND amr <@ ARRAY['pwd','otp','hwk','swk','mfa']::text[])`,
    );
    await q.query(`ALTER TABLE sessions ADD COLUMN reauthenticated_at timestamptz`);
    await q.query(`ALTER TABLE users ADD COLUMN email_verified_at timestamptz`);
    await q.query(`ALTER TABLE users ADD COLUMN totp_secret text`);
    await q.query(`ALTER TABLE users ADD COLUMN totp_enabled_at timestamptz`);
    await q.query(`ALTER TABLE users ADD COLUMN totp_last_step bigint`);
    await q.query(`ALTER TABLE users ADD CONSTRAINT users_totp_check CHECK (totp_enabled_at IS NULL OR totp_secret IS NOT NULL)`);
    await q.query(`ALTER TABLE sign_in_failures DROP CONSTRAINT sign_in_failures_subject_check`);
    await q.query(
      `ALTER TABLE sign_in_failures ADD CONSTRAINT sign_in_failures_subject_check CHECK (subject ~ '^[a-z][a-z-]{0,30}:[0-9a-f]{64}$')`,
    );
    await q.query(`
      CREATE TABLE recovery_codes (
        id uuid NOT NULL,
        user_id uuid NOT NULL,
        code_hash text NOT NULL,
        created_at timestamptz NOT NULL,
        used_at timestamptz,
        CONSTRAINT recovery_codes_pkey PRIMARY KEY (id),
        CONSTRAINT recovery_codes_user_id_code_hash_key UNIQUE (user_id, code_hash),
        CONSTRAINT recovery_codes_code_hash_check CHECK (code_hash ~ '^[0-9a-f]{64}$'),
        CONSTRAINT recovery_codes_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    await q.query(`
      CREATE TABLE passkeys (
        id uuid NOT NULL,
        user_id uuid NOT NULL,
        credential_id text NOT NULL,
        public_key bytea NOT NULL,
        sign_count bigint NOT NULL DEFAULT 0,
        transports text[] NOT NULL DEFAULT '{}',
        device_type text NOT NULL,
        backed_up boolean NOT NULL,
        name text NOT NULL,
        created_at timestamptz NOT NULL,
        last_used_at timestamptz,
        CONSTRAINT passkeys_pkey PRIMARY KEY (id),
        CONSTRAINT passkeys_credential_id_key UNIQUE (credential_id),
        CONSTRAINT passkeys_credential_id_check CHECK (credential_id ~ '^[A-Za-z0-9_-]+$' AND char_length(credential_id) BETWEEN 16 AND 1366),
        CONSTRAINT passkeys_device_type_check CHECK (device_type IN ('singleDevice', 'multiDevice')),
        CONSTRAINT passkeys_name_check CHECK (char_length(name) BETWEEN 1 AND 64),
        CONSTRAINT passkeys_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX passkeys_user_id_idx ON passkeys (user_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE passkeys`);
    await q.query(`DROP TABLE recovery_codes`);
    await q.query(`ALTER TABLE sign_in_failures DROP CONSTRAINT sign_in_failures_subject_check`);
    await q.query(
      `ALTER TABLE sign_in_failures ADD CONSTRAINT sign_in_failures_subject_check CHECK (subject ~ '^(login|ip|signup|signup-failed|device-user|device-ip):[0-9a-f]{64}$')`,
    );
    await q.query(`ALTER TABLE users DROP CONSTRAINT users_totp_check`);
    await q.query(
      `ALTER TABLE users DROP COLUMN totp_last_step, DROP COLUMN totp_enabled_at, DROP COLUMN totp_secret, DROP COLUMN email_verified_at`,
    );
    await q.query(`ALTER TABLE sessions DROP COLUMN reauthenticated_at, DROP COLUMN amr`);
  }
}
