import { MigrationInterface, QueryRunner } from 'typeorm';

/** Sign-ups are counted per client address too (`signup:` subjects), to slow down mass account creation. */
export class SignUpThrottle1763900000002 implements MigrationInterface {
  name = 'SignUpThrottle1763900000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sign_in_failures DROP CONSTRAINT sign_in_failures_subject_check`);
    await q.query(
      `ALTER TABLE sign_in_failures ADD CONSTRAINT sign_in_failures_subject_check CHECK (subject ~ '^(login|ip|signup):[0-9a-f]{64}$')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM sign_in_failures WHERE subject LIKE 'signup:%'`);
    await q.query(`ALTER TABLE sign_in_failures DROP CONSTRAINT sign_in_failures_subject_check`);
    await q.query(
      `ALTER TABLE sign_in_failures ADD CONSTRAINT sign_in_failures_subject_check CHECK (subject ~ '^(login|ip):[0-9a-f]{64}$')`,
    );
  }
}
