import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A user's choice of the messages that are not about their own seat (today: the reminder the day before
 * an event). On by default, as GitHub's and pretix's are; off from the account page or the one-click
 * unsubscribe link of such a mail (RFC 8058).
 */
export class MailPreferences1796200000003 implements MigrationInterface {
  name = 'MailPreferences1796200000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ADD COLUMN mail_reminders boolean NOT NULL DEFAULT true`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users DROP COLUMN mail_reminders`);
  }
}
