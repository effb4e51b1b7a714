import { MigrationInterface, QueryRunner } from 'typeorm';

/** OpenID Connect pairwise subject identifiers: each application's subject type (public unless it asked). */
export class PairwiseSubjects1796500000401 implements MigrationInterface {
  name = 'PairwiseSubjects1796500000401';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "oauth_applications" ADD "subject_type" text NOT NULL DEFAULT \'public\'');
    await q.query(
      'ALTER TABLE "oauth_applications" ADD CONSTRAINT "oauth_applications_subject_type_check" CHECK (subject_type IN (\'public\', \'pairwise\'))',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "oauth_applications" DROP CONSTRAINT "oauth_applications_subject_type_check"');
    await q.query('ALTER TABLE "oauth_applications" DROP COLUMN "subject_type"');
  }
}
