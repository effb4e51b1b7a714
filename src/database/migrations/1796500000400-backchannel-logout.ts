import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * OpenID Connect Back-Channel Logout: the session that approved a code (the id_token's `sid`), the
 * applications that got an id_token in each session (told when it ends), and where each wants to be told.
 */
export class BackchannelLogout1796500000400 implements MigrationInterface {
  name = 'BackchannelLogout1796500000400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE "oauth_session_clients" ("session_id" uuid NOT NULL, "application_id" uuid NOT NULL, "user_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "oauth_session_clients_pkey" PRIMARY KEY ("session_id", "application_id"))',
    );
    await q.query('CREATE INDEX "oauth_session_clients_application_id_idx" ON "oauth_session_clients"  ("application_id") ');
    await q.query('ALTER TABLE "oauth_applications" ADD "backchannel_logout_uri" text');
    await q.query('ALTER TABLE "oauth_applications" ADD "backchannel_logout_session_required" boolean NOT NULL DEFAULT false');
    await q.query('ALTER TABLE "oauth_authorization_codes" ADD "session_id" uuid');
    await q.query(
      'ALTER TABLE "oauth_session_clients" ADD CONSTRAINT "oauth_session_clients_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await q.query(
      'ALTER TABLE "oauth_session_clients" ADD CONSTRAINT "oauth_session_clients_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await q.query(
      'ALTER TABLE "oauth_session_clients" ADD CONSTRAINT "oauth_session_clients_application_id_fkey" FOREIGN KEY ("application_id") REFERENCES "oauth_applications"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "oauth_session_clients" DROP CONSTRAINT "oauth_session_clients_application_id_fkey"');
    await q.query('ALTER TABLE "oauth_session_clients" DROP CONSTRAINT "oauth_session_clients_user_id_fkey"');
    await q.query('ALTER TABLE "oauth_session_clients" DROP CONSTRAINT "oauth_session_clients_session_id_fkey"');
    await q.query('ALTER TABLE "oauth_authorization_codes" DROP COLUMN "session_id"');
    await q.query('ALTER TABLE "oauth_applications" DROP COLUMN "backchannel_logout_session_required"');
    await q.query('ALTER TABLE "oauth_applications" DROP COLUMN "backchannel_logout_uri"');
    await q.query('DROP INDEX "public"."oauth_session_clients_application_id_idx"');
    await q.query('DROP TABLE "oauth_session_clients"');
  }
}
