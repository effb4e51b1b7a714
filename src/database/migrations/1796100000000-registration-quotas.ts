import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Dynamic client registration that one actor cannot exhaust, and CORS that trusts a self-registered
 * application only once someone vouched for it: `registered_from`, the network (IPv4 /24, IPv6 /48) an
 * application registered itself from, counted against the per-network quota of unclaimed applications
 * (a partial index, as only unclaimed ones are counted); `first_consented_at`, when a user first
 * consented to it (its setting fires the change notification, so every instance's CORS origins learn it).
 * A self-registered application users consented to before this migration gets its earliest grant's
 * time, so it keeps the CORS trust it had.
 */
export class RegistrationQuotas1796100000000 implements MigrationInterface {
  name = 'RegistrationQuotas1796100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_applications ADD COLUMN registered_from text`);
    await q.query(`ALTER TABLE oauth_applications ADD COLUMN first_consented_at timestamptz`);
    await q.query(
      `UPDATE oauth_applications a
          SET first_consented_at = coalesce((SELECT min(g.created_at) FROM oauth_grants g WHERE g.application_id = a.id), now())
        WHERE a.owner_id IS NULL AND EXISTS (SELECT 1 FROM oauth_grants g WHERE g.application_id = a.id)`,
    );
    await q.query(
      `CREATE INDEX oauth_applications_unclaimed_idx ON oauth_applications (registered_from, created_at) WHERE owner_id IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX oauth_applications_unclaimed_idx`);
    await q.query(`ALTER TABLE oauth_applications DROP COLUMN first_consented_at`);
    await q.query(`ALTER TABLE oauth_applications DROP COLUMN registered_from`);
  }
}
