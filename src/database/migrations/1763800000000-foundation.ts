import { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1763800000000 implements MigrationInterface {
  name = 'Foundation1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        username text NOT NULL CHECK (username ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{1,38}$'),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
        email text NOT NULL CHECK (length(email) BETWEEN 3 AND 254 AND position('@' in email) > 1),
        password_hash text NOT NULL,
        state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'blocked')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX users_username_lower_key ON users (lower(username))`);
    await q.query(`CREATE UNIQUE INDEX users_email_lower_key ON users (lower(email))`);
    await q.query(`
      CREATE TABLE personal_access_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
        token_hash text NOT NULL CONSTRAINT personal_access_tokens_token_hash_key UNIQUE
          CHECK (token_hash ~ '^[0-9a-f]{64}$'),
        scopes text[] NOT NULL CHECK (cardinality(scopes) > 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        expires_at timestamptz,
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX personal_access_tokens_user_id_idx ON personal_access_tokens (user_id, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE personal_access_tokens`);
    await q.query(`DROP TABLE users`);
  }
}
