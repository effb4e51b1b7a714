import { MigrationInterface, QueryRunner } from 'typeorm';

/** Failed sign-ins, counted per account and per client address to throttle password guessing. */
export class SignInFailures1763800000003 implements MigrationInterface {
  name = 'SignInFailures1763800000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sign_in_failures (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        subject text NOT NULL CHECK (subject ~ '^(login|ip):[0-9a-f]{64}$'),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX sign_in_failures_subject_created_at_idx ON sign_in_failures (subject, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sign_in_failures`);
  }
}
