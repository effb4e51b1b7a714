import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Resource servers other than Agora's API (RFC 8707): `oauth_resource_servers`, and the audience that
 * codes, refresh tokens and access tokens now record (`resources`, `audience`: empty means Agora's API,
 * so the rows already there keep meaning what they meant).
 */
export class ResourceServers1796600000100 implements MigrationInterface {
  name = 'ResourceServers1796600000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE oauth_resource_servers (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        owner_id uuid NOT NULL,
        name text NOT NULL,
        identifier text NOT NULL,
        access_token_format text NOT NULL DEFAULT 'jwt',
        introspection_id text NOT NULL,
        introspection_secret_hash text NOT NULL,
        created_at timestamptz NOT NULL,
        CONSTRAINT oauth_resource_servers_pkey PRIMARY KEY (id),
        CONSTRAINT oauth_resource_servers_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES users (id) ON DELETE CASCADE,
        CONSTRAINT oauth_resource_servers_name_check CHECK (length(name) BETWEEN 1 AND 100),
        CONSTRAINT oauth_resource_servers_identifier_check CHECK (length(identifier) <= 2000),
        CONSTRAINT oauth_resource_servers_access_token_format_check CHECK (access_token_format IN ('jwt', 'opaque')),
        CONSTRAINT oauth_resource_servers_introspection_secret_hash_check CHECK (introspection_secret_hash ~ '^[0-9a-f]{64}$')
      )`);
    await q.query(`CREATE UNIQUE INDEX oauth_resource_servers_identifier_key ON oauth_resource_servers (identifier)`);
    await q.query(`CREATE UNIQUE INDEX oauth_resource_servers_introspection_id_key ON oauth_resource_servers (introspection_id)`);
    await q.query(`CREATE INDEX oauth_resource_servers_owner_id_idx ON oauth_resource_servers (owner_id)`);
    await q.query(`ALTER TABLE oauth_authorization_codes ADD COLUMN resources text[] NOT NULL DEFAULT '{}'`);
    await q.query(`ALTER TABLE oauth_refresh_tokens ADD COLUMN resources text[] NOT NULL DEFAULT '{}'`);
    await q.query(`ALTER TABLE oauth_access_tokens ADD COLUMN audience text[] NOT NULL DEFAULT '{}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_access_tokens DROP COLUMN audience`);
    await q.query(`ALTER TABLE oauth_refresh_tokens DROP COLUMN resources`);
    await q.query(`ALTER TABLE oauth_authorization_codes DROP COLUMN resources`);
    await q.query(`DROP TABLE oauth_resource_servers`);
  }
}
