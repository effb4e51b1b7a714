import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The browser session an authorization came from, kept by what outlives its code: a refresh token family
 * (every successor copies it) and a device authorization (the session that approved it at the verification
 * page), so their id_tokens carry the same `sid` as the code's (back-channel logout). No foreign key: the
 * session may end first, and the `sid` of the grant stays what the client was told.
 */
export class OidcSessionOfGrants1796600000200 implements MigrationInterface {
  name = 'OidcSessionOfGrants1796600000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "oauth_refresh_tokens" ADD "session_id" uuid');
    await q.query('ALTER TABLE "oauth_device_authorizations" ADD "session_id" uuid');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "oauth_device_authorizations" DROP COLUMN "session_id"');
    await q.query('ALTER TABLE "oauth_refresh_tokens" DROP COLUMN "session_id"');
  }
}
