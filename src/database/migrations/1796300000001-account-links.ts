import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The links Agora mails to prove an address or reset a password (docs/account-security.md): one row per
 * link, with the address it proves, when it expires and when it was used. The link's token is the row's
 * id with an HMAC under a key derived from SECRET_KEY: nothing here (nor in the job that mails it) is
 * enough to use a link.
 *
 * Accounts that exist when this runs count as verified (from their creation): they could create tokens,
 * applications and organizers before, and an upgrade must not take that away from them. Only accounts
 * signed up from now on prove their address.
 */
export class AccountLinks1796300000001 implements MigrationInterface {
  name = 'AccountLinks1796300000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE account_links (
        id uuid NOT NULL,
        user_id uuid NOT NULL,
        purpose text NOT NULL,
        email text NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        CONSTRAINT account_links_pkey PRIMARY KEY (id),
        CONSTRAINT account_links_purpose_check CHECK (purpose IN ('verify-email', 'change-email', 'reset-password')),
        CONSTRAINT account_links_email_check CHECK (length(email) BETWEEN 3 AND 254),
        CONSTRAINT account_links_expires_at_check CHECK (expires_at > created_at),
        CONSTRAINT account_links_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX account_links_user_id_purpose_idx ON account_links (user_id, purpose)`);
    await q.query(`CREATE INDEX account_links_expires_at_idx ON account_links (expires_at)`);
    await q.query(`UPDATE users SET email_verified_at = created_at WHERE email_verified_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE account_links`);
  }
}
