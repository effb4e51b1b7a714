import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Client credentials management: `private_key_jwt` client authentication (the method each client
 * registered with, its public keys by value or by `jwks_uri`, and the `jti` of every accepted assertion
 * until it expires), a second client secret during a rotation, and the hash of a dynamically registered
 * client's registration access token (RFC 7592). Public clients' method is `none`.
 */
export class ClientKeysAndSecrets1796500000300 implements MigrationInterface {
  name = 'ClientKeysAndSecrets1796500000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_applications
      ADD COLUMN previous_client_secret_hash text,
      ADD COLUMN previous_secret_created_at timestamptz,
      ADD COLUMN token_endpoint_auth_method text NOT NULL DEFAULT 'client_secret_basic',
      ADD COLUMN jwks jsonb,
      ADD COLUMN jwks_uri text,
      ADD COLUMN registration_access_token_hash text`);
    await q.query(`UPDATE oauth_applications SET token_endpoint_auth_method = 'none' WHERE client_type = 'public'`);
    await q.query(`ALTER TABLE oauth_applications DROP CONSTRAINT oauth_applications_client_secret_hash_check`);
    await q.query(`ALTER TABLE oauth_applications ADD CONSTRAINT oauth_applications_client_secret_hash_check
      CHECK ((client_type = 'confidential' AND token_endpoint_auth_method <> 'private_key_jwt') = (client_secret_hash IS NOT NULL) AND (client_secret_hash IS NULL OR client_secret_hash ~ '^[0-9a-f]{64}$'))`);
    await q.query(`ALTER TABLE oauth_applications ADD CONSTRAINT oauth_applications_previous_client_secret_hash_check
      CHECK (previous_client_secret_hash IS NULL OR (client_secret_hash IS NOT NULL AND previous_client_secret_hash ~ '^[0-9a-f]{64}$'))`);
    await q.query(`ALTER TABLE oauth_applications ADD CONSTRAINT oauth_applications_token_endpoint_auth_method_check
      CHECK (token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none') AND (token_endpoint_auth_method <> 'private_key_jwt' OR client_type = 'confidential'))`);
    await q.query(`ALTER TABLE oauth_applications ADD CONSTRAINT oauth_applications_jwks_check
      CHECK ((token_endpoint_auth_method = 'private_key_jwt') = (jwks IS NOT NULL OR jwks_uri IS NOT NULL) AND (jwks IS NULL OR jwks_uri IS NULL))`);
    await q.query(`ALTER TABLE oauth_applications ADD CONSTRAINT oauth_applications_registration_access_token_hash_check
      CHECK (registration_access_token_hash ~ '^[0-9a-f]{64}$')`);
    await q.query(`CREATE TABLE oauth_client_assertions (
      application_id uuid NOT NULL,
      jti text NOT NULL,
      expires_at timestamptz NOT NULL,
      CONSTRAINT oauth_client_assertions_pkey PRIMARY KEY (application_id, jti),
      CONSTRAINT oauth_client_assertions_jti_check CHECK (length(jti) BETWEEN 1 AND 256),
      CONSTRAINT oauth_client_assertions_application_id_fkey FOREIGN KEY (application_id) REFERENCES oauth_applications (id) ON DELETE CASCADE
    )`);
    await q.query(`CREATE INDEX oauth_client_assertions_expires_at_idx ON oauth_client_assertions (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE oauth_client_assertions`);
    await q.query(`DELETE FROM oauth_applications WHERE token_endpoint_auth_method = 'private_key_jwt'`);
    await q.query(`ALTER TABLE oauth_applications DROP CONSTRAINT oauth_applications_registration_access_token_hash_check`);
    await q.query(`ALTER TABLE oauth_applications DROP CONSTRAINT oauth_applications_jwks_check`);
    await q.query(`ALTER TABLE oauth_applications DROP CONSTRAINT oauth_applications_token_endpoint_auth_method_check`);
    await q.query(`ALTER TABLE oauth_applications DROP CONSTRAINT oauth_applications_previous_client_secret_hash_check`);
    await q.query(`ALTER TABLE oauth_applications DROP CONSTRAINT oauth_applications_client_secret_hash_check`);
    await q.query(`ALTER TABLE oauth_applications ADD CONSTRAINT oauth_applications_client_secret_hash_check
      CHECK ((client_type = 'confidential') = (client_secret_hash IS NOT NULL) AND (client_secret_hash IS NULL OR client_secret_hash ~ '^[0-9a-f]{64}$'))`);
    await q.query(`ALTER TABLE oauth_applications
      DROP COLUMN registration_access_token_hash,
      DROP COLUMN jwks_uri,
      DROP COLUMN jwks,
      DROP COLUMN token_endpoint_auth_method,
      DROP COLUMN previous_secret_created_at,
      DROP COLUMN previous_client_secret_hash`);
  }
}
