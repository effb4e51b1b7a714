import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The `resource` values of a device authorization (RFC 8707), as an authorization code keeps them: the
 * tokens its client polls for are for those resources (empty: Agora's API), which the user saw on the
 * device consent page.
 */
export class DeviceAuthorizationResources1796700000100 implements MigrationInterface {
  name = 'DeviceAuthorizationResources1796700000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_device_authorizations ADD COLUMN resources text[] NOT NULL DEFAULT '{}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_device_authorizations DROP COLUMN resources`);
  }
}
