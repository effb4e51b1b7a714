import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Public clients (RFC 8252, token_endpoint_auth_method none): a client type, no secret for a public
 * client; post-logout redirect URIs for RP-initiated logout; no owner for an application registered
 * dynamically (RFC 7591) until a user claims it.
 */
export class PublicClients1796000000001 implements MigrationInterface {
  name = 'PublicClients1796000000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "oauth_applications" ADD "client_type" text NOT NULL DEFAULT 'confidential'`);
    await q.query(`ALTER TABLE "oauth_applications" ADD "post_logout_redirect_uris" text array NOT NULL DEFAULT '{}'`);
    await q.query(`ALTER TABLE "oauth_applications" ALTER COLUMN "owner_id" DROP NOT NULL`);
    await q.query(`ALTER TABLE "oauth_applications" ALTER COLUMN "client_secret_hash" DROP NOT NULL`);
    await q.query(`ALTER TABLE "oauth_applications" DROP CONSTRAINT "oauth_applications_client_secret_hash_check"`);
    await q.query(
      `ALTER TABLE "oauth_applications" ADD CONSTRAINT "oauth_applications_client_secret_hash_check" CHECK ((client_type = 'confidential') = (client_secret_hash IS NOT NULL) AND (client_secret_hash IS NULL OR client_secret_hash ~ '^[0-9a-f]{64}$'))`,
    );
    await q.query(
      `ALTER TABLE "oauth_applications" ADD CONSTRAINT "oauth_applications_post_logout_redirect_uris_check" CHECK (cardinality(post_logout_redirect_uris) <= 10)`,
    );
    await q.query(
      `ALTER TABLE "oauth_applications" ADD CONSTRAINT "oauth_applications_client_type_check" CHECK (client_type IN ('confidential', 'public'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    // Public and unclaimed applications cannot exist in the older schema.
    await q.query(`DELETE FROM "oauth_applications" WHERE "client_type" = 'public' OR "owner_id" IS NULL`);
    await q.query(`ALTER TABLE "oauth_applications" DROP CONSTRAINT "oauth_applications_client_type_check"`);
    await q.query(`ALTER TABLE "oauth_applications" DROP CONSTRAINT "oauth_applications_post_logout_redirect_uris_check"`);
    await q.query(`ALTER TABLE "oauth_applications" DROP CONSTRAINT "oauth_applications_client_secret_hash_check"`);
    await q.query(
      `ALTER TABLE "oauth_applications" ADD CONSTRAINT "oauth_applications_client_secret_hash_check" CHECK (client_secret_hash ~ '^[0-9a-f]{64}$')`,
    );
    await q.query(`ALTER TABLE "oauth_applications" ALTER COLUMN "client_secret_hash" SET NOT NULL`);
    await q.query(`ALTER TABLE "oauth_applications" ALTER COLUMN "owner_id" SET NOT NULL`);
    await q.query(`ALTER TABLE "oauth_applications" DROP COLUMN "post_logout_redirect_uris"`);
    await q.query(`ALTER TABLE "oauth_applications" DROP COLUMN "client_type"`);
  }
}
