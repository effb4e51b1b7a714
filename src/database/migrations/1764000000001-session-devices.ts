import { MigrationInterface, QueryRunner } from 'typeorm';

/** Sessions remember which browser they are (its User-Agent, shortened), for the list of active sessions. */
export class SessionDevices1764000000001 implements MigrationInterface {
  name = 'SessionDevices1764000000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions ADD COLUMN user_agent text`);
    await q.query(`ALTER TABLE sessions ADD CONSTRAINT sessions_user_agent_check CHECK (char_length(user_agent) <= 256)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions DROP COLUMN user_agent`);
  }
}
