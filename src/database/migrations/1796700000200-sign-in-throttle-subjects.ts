import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Failed sign-ins are counted as `sign-in-account:` and `sign-in-ip:` (they were the bare `login:` and
 * `ip:`), named for what they count like the other subjects of `counted_attempts` (`device-ip:`,
 * `second-user:`, …). The rows of the current window are renamed, so no failure is forgotten. During a
 * rolling update an instance of the previous release still writes the old names until it stops: for at
 * most one 15-minute window, its failures and the new instances' are counted apart.
 */
export class SignInThrottleSubjects1796700000200 implements MigrationInterface {
  name = 'SignInThrottleSubjects1796700000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE counted_attempts SET subject = 'sign-in-account:' || substr(subject, 7) WHERE subject LIKE 'login:%'`);
    await q.query(`UPDATE counted_attempts SET subject = 'sign-in-ip:' || substr(subject, 4) WHERE subject LIKE 'ip:%'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE counted_attempts SET subject = 'login:' || substr(subject, 17) WHERE subject LIKE 'sign-in-account:%'`);
    await q.query(`UPDATE counted_attempts SET subject = 'ip:' || substr(subject, 12) WHERE subject LIKE 'sign-in-ip:%'`);
  }
}
