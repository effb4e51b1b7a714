import { MigrationInterface, QueryRunner } from 'typeorm';

/** Sign-ups refused because the username or email is taken are counted per client address too (`signup-failed:` subjects), to slow down account probing. */
export class SignUpProbeThrottle1763900000004 implements MigrationInterface {
  name = 'SignUpProbeThrottle1763900000004';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sign_in_failures DROP CONSTRAINT sign_in_failures_subject_check`);
    await q.query(
      `ALTER TABLE sign_in_failures ADD CONSTRAINT sign_in_failures_subject_check CHECK (subject ~ '^(login|ip|signup|signup-failed):[0-9a-f]{64}$')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM sign_in_failures WHERE subject LIKE 'signup-failed:%'`);
    await q.query(`ALTER TABLE sign_in_failures DROP CONSTRAINT sign_in_failures_subject_check`);
    await q.query(
      `ALTER TABLE sign_in_failures ADD CONSTRAINT sign_in_failures_subject_check CHECK (subject ~ '^(login|ip|signup):[0-9a-f]{64}$')`,
    );
  }
}
