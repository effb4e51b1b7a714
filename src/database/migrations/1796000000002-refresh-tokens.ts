import { MigrationInterface, QueryRunner } from 'typeorm';

/** OAuth refresh tokens, rotated on every use and revoked by family (src/oauth/tokens/refresh-token.entity.ts). */
export class RefreshTokens1796000000002 implements MigrationInterface {
  name = 'RefreshTokens1796000000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE oauth_refresh_tokens (
        id uuid NOT NULL,
        token_hash text NOT NULL,
        family_id uuid NOT NULL,
        application_id uuid NOT NULL,
        user_id uuid NOT NULL,
        scopes text[] NOT NULL,
        auth_time timestamptz NOT NULL,
        access_token_id uuid,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        family_expires_at timestamptz NOT NULL,
        used_at timestamptz,
        revoked_at timestamptz,
        CONSTRAINT oauth_refresh_tokens_pkey PRIMARY KEY (id),
        CONSTRAINT oauth_refresh_tokens_token_hash_key UNIQUE (token_hash),
        CONSTRAINT oauth_refresh_tokens_token_hash_check CHECK (token_hash ~ '^[0-9a-f]{64}$'),
        CONSTRAINT oauth_refresh_tokens_expiry_check CHECK (expires_at <= family_expires_at),
        CONSTRAINT oauth_refresh_tokens_application_id_fkey FOREIGN KEY (application_id) REFERENCES oauth_applications (id) ON DELETE CASCADE,
        CONSTRAINT oauth_refresh_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
        CONSTRAINT oauth_refresh_tokens_access_token_id_fkey FOREIGN KEY (access_token_id) REFERENCES oauth_access_tokens (id) ON DELETE SET NULL
      )`);
    await q.query(`CREATE INDEX oauth_refresh_tokens_family_id_idx ON oauth_refresh_tokens (family_id)`);
    await q.query(`CREATE INDEX oauth_refresh_tokens_user_application_idx ON oauth_refresh_tokens (user_id, application_id)`);
    await q.query(`CREATE INDEX oauth_refresh_tokens_application_id_idx ON oauth_refresh_tokens (application_id)`);
    // For ON DELETE SET NULL when housekeeping deletes access tokens, and a replayed code's family.
    await q.query(`CREATE INDEX oauth_refresh_tokens_access_token_id_idx ON oauth_refresh_tokens (access_token_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE oauth_refresh_tokens`);
  }
}
