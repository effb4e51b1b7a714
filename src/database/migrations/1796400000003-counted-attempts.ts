import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `sign_in_failures` becomes `counted_attempts`: besides failed sign-ins it counts sign-ups, device-flow
 * user codes, second-step codes, passkey answers and mailed links (AttemptThrottle). The view under the
 * old name keeps the previous release working while old and new instances run together (a rolling
 * update): it reads, inserts into and deletes from the renamed table (a simple view is updatable). A
 * later release drops it.
 */
export class CountedAttempts1796400000003 implements MigrationInterface {
  name = 'CountedAttempts1796400000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sign_in_failures RENAME TO counted_attempts`);
    await q.query(`ALTER TABLE counted_attempts RENAME CONSTRAINT sign_in_failures_pkey TO counted_attempts_pkey`);
    await q.query(`ALTER TABLE counted_attempts RENAME CONSTRAINT sign_in_failures_subject_check TO counted_attempts_subject_check`);
    await q.query(`ALTER INDEX sign_in_failures_subject_created_at_idx RENAME TO counted_attempts_subject_created_at_idx`);
    await q.query(`ALTER SEQUENCE sign_in_failures_id_seq RENAME TO counted_attempts_id_seq`);
    await q.query(`CREATE VIEW sign_in_failures AS SELECT id, subject, created_at FROM counted_attempts`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP VIEW sign_in_failures`);
    await q.query(`ALTER SEQUENCE counted_attempts_id_seq RENAME TO sign_in_failures_id_seq`);
    await q.query(`ALTER INDEX counted_attempts_subject_created_at_idx RENAME TO sign_in_failures_subject_created_at_idx`);
    await q.query(`ALTER TABLE counted_attempts RENAME CONSTRAINT counted_attempts_subject_check TO sign_in_failures_subject_check`);
    await q.query(`ALTER TABLE counted_attempts RENAME CONSTRAINT counted_attempts_pkey TO sign_in_failures_pkey`);
    await q.query(`ALTER TABLE counted_attempts RENAME TO sign_in_failures`);
  }
}
