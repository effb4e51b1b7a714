import { MigrationInterface, QueryRunner } from 'typeorm';

/** Sign-in sessions and the OAuth 2.0 / OpenID Connect authorization server. */
export class OAuth1763800000002 implements MigrationInterface {
  name = 'OAuth1763800000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        token_hash text NOT NULL CONSTRAINT sessions_token_hash_key UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        auth_time timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX sessions_user_id_idx ON sessions (user_id)`);

    await q.query(`
      CREATE TABLE oauth_applications (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        owner_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
        client_id text NOT NULL CONSTRAINT oauth_applications_client_id_key UNIQUE,
        client_secret_hash text NOT NULL CHECK (client_secret_hash ~ '^[0-9a-f]{64}$'),
        redirect_uris text[] NOT NULL CHECK (cardinality(redirect_uris) BETWEEN 1 AND 10),
        scopes text[] NOT NULL CHECK (cardinality(scopes) > 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        secret_rotated_at timestamptz
      )`);
    await q.query(`CREATE INDEX oauth_applications_owner_id_idx ON oauth_applications (owner_id)`);

    await q.query(`
      CREATE TABLE oauth_access_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        token_hash text NOT NULL CONSTRAINT oauth_access_tokens_token_hash_key UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
        application_id uuid NOT NULL REFERENCES oauth_applications (id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        scopes text[] NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX oauth_access_tokens_user_application_idx ON oauth_access_tokens (user_id, application_id)`);
    await q.query(`CREATE INDEX oauth_access_tokens_application_id_idx ON oauth_access_tokens (application_id)`);

    await q.query(`
      CREATE TABLE oauth_authorization_codes (
        code_hash text PRIMARY KEY CHECK (code_hash ~ '^[0-9a-f]{64}$'),
        application_id uuid NOT NULL REFERENCES oauth_applications (id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        redirect_uri text NOT NULL,
        scopes text[] NOT NULL,
        nonce text,
        code_challenge text NOT NULL CHECK (code_challenge ~ '^[A-Za-z0-9_-]{43}$'),
        auth_time timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        consumed_at timestamptz,
        access_token_id uuid REFERENCES oauth_access_tokens (id) ON DELETE SET NULL
      )`);
    await q.query(`CREATE INDEX oauth_authorization_codes_expires_at_idx ON oauth_authorization_codes (expires_at)`);

    await q.query(`
      CREATE TABLE oauth_grants (
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        application_id uuid NOT NULL REFERENCES oauth_applications (id) ON DELETE CASCADE,
        scopes text[] NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, application_id)
      )`);

    await q.query(`
      CREATE TABLE oauth_signing_keys (
        kid text PRIMARY KEY,
        public_key_pem text NOT NULL,
        private_key_encrypted text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        retired_at timestamptz
      )`);
    // At most one key signs at a time.
    await q.query(`CREATE UNIQUE INDEX oauth_signing_keys_one_active_key ON oauth_signing_keys ((true)) WHERE retired_at IS NULL`);

    await q.query(`
      CREATE TRIGGER oauth_access_tokens_credential_change
        AFTER UPDATE OF revoked_at, expires_at, scopes OR DELETE ON oauth_access_tokens
        FOR EACH ROW EXECUTE FUNCTION agora_notify_credential_change()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER oauth_access_tokens_credential_change ON oauth_access_tokens`);
    for (const table of [
      'oauth_signing_keys',
      'oauth_grants',
      'oauth_authorization_codes',
      'oauth_access_tokens',
      'oauth_applications',
      'sessions',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
