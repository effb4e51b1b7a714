import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A remembered approval (`oauth_grants`) also names the resource servers (RFC 8707) the user approved
 * the application for, each with the scopes approved for it (`{ "<id>": ["api", …] }`): a later request
 * for them with those scopes is answered without the consent page, as one for the approved scopes alone
 * is. By id, not identifier, so a resource server deleted and registered again under the same identifier
 * (perhaps by someone else) is asked about afresh.
 */
export class GrantResourceServers1796700000300 implements MigrationInterface {
  name = 'GrantResourceServers1796700000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_grants ADD COLUMN resource_server_scopes jsonb NOT NULL DEFAULT '{}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_grants DROP COLUMN resource_server_scopes`);
  }
}
