import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * ES256 and EdDSA beside RS256, and JWT access tokens (docs/oauth.md):
 * - oauth_signing_keys.alg: the algorithm a key signs with; existing keys are RS256. One active key per
 *   algorithm (the partial unique index now on alg).
 * - oauth_applications.id_token_signed_response_alg: the algorithm of the application's id_tokens and JWT
 *   access tokens (RS256 unless it asked for another).
 * - oauth_applications.access_token_format: opaque (as before) or jwt (RFC 9068).
 */
export class SigningAlgorithmsAndJwtAccessTokens1796500000100 implements MigrationInterface {
  name = 'SigningAlgorithmsAndJwtAccessTokens1796500000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_signing_keys ADD COLUMN alg text NOT NULL DEFAULT 'RS256'`);
    await q.query(`ALTER TABLE oauth_signing_keys ADD CONSTRAINT oauth_signing_keys_alg_check CHECK (alg IN ('RS256', 'ES256', 'EdDSA'))`);
    await q.query(`DROP INDEX oauth_signing_keys_one_active_key`);
    await q.query(`CREATE UNIQUE INDEX oauth_signing_keys_one_active_key ON oauth_signing_keys (alg) WHERE retired_at IS NULL`);
    await q.query(`ALTER TABLE oauth_applications ADD COLUMN id_token_signed_response_alg text NOT NULL DEFAULT 'RS256'`);
    await q.query(
      `ALTER TABLE oauth_applications ADD CONSTRAINT oauth_applications_id_token_signed_response_alg_check CHECK (id_token_signed_response_alg IN ('RS256', 'ES256', 'EdDSA'))`,
    );
    await q.query(`ALTER TABLE oauth_applications ADD COLUMN access_token_format text NOT NULL DEFAULT 'opaque'`);
    await q.query(
      `ALTER TABLE oauth_applications ADD CONSTRAINT oauth_applications_access_token_format_check CHECK (access_token_format IN ('opaque', 'jwt'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_applications DROP COLUMN access_token_format`);
    await q.query(`ALTER TABLE oauth_applications DROP COLUMN id_token_signed_response_alg`);
    await q.query(`DELETE FROM oauth_signing_keys WHERE alg <> 'RS256'`);
    await q.query(`DROP INDEX oauth_signing_keys_one_active_key`);
    await q.query(`CREATE UNIQUE INDEX oauth_signing_keys_one_active_key ON oauth_signing_keys ((true)) WHERE retired_at IS NULL`);
    await q.query(`ALTER TABLE oauth_signing_keys DROP COLUMN alg`);
  }
}
