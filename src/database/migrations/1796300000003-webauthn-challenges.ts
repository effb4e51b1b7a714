import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The challenges of passkey ceremonies (docs/account-security.md, "Passkeys"): issued by the server with
 * the options a page hands to the browser, each usable once (deleted as it is used) and for ten minutes,
 * and bound to what it was issued for (a signed-in session, a pending sign-in, or an anonymous sign-in
 * page). Housekeeping deletes the expired ones.
 */
export class WebAuthnChallenges1796300000003 implements MigrationInterface {
  name = 'WebAuthnChallenges1796300000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webauthn_challenges (
        challenge text NOT NULL,
        purpose text NOT NULL,
        bound_to text NOT NULL,
        user_id uuid,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        CONSTRAINT webauthn_challenges_pkey PRIMARY KEY (challenge),
        CONSTRAINT webauthn_challenges_challenge_check CHECK (challenge ~ '^[A-Za-z0-9_-]{43}$'),
        CONSTRAINT webauthn_challenges_purpose_check CHECK (purpose IN ('registration', 'sign-in', 'second-factor')),
        CONSTRAINT webauthn_challenges_bound_to_check CHECK (char_length(bound_to) BETWEEN 1 AND 100),
        CONSTRAINT webauthn_challenges_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX webauthn_challenges_expires_at_idx ON webauthn_challenges (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webauthn_challenges`);
  }
}
