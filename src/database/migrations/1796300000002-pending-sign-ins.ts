import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sign-ins waiting for their second step (docs/account-security.md, "Two-factor authentication"): the
 * password was right, the code is still to come. A browser holds one by a cookie whose hash is kept
 * here; a signed-in session asked for more (acr_values) holds one too, naming the session it will step up.
 */
export class PendingSignIns1796300000002 implements MigrationInterface {
  name = 'PendingSignIns1796300000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE pending_sign_ins (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        token_hash text NOT NULL,
        user_id uuid NOT NULL,
        amr text[] NOT NULL,
        return_to text NOT NULL,
        step_up_session_id uuid,
        require text NOT NULL DEFAULT 'aal2',
        failures integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        CONSTRAINT pending_sign_ins_pkey PRIMARY KEY (id),
        CONSTRAINT pending_sign_ins_token_hash_key UNIQUE (token_hash),
        CONSTRAINT pending_sign_ins_token_hash_check CHECK (token_hash ~ '^[0-9a-f]{64}$'),
        CONSTRAINT pending_sign_ins_amr_check CHECK (amr <@ ARRAY['pwd','otp','hwk','swk','mfa']::text[]),
        CONSTRAINT pending_sign_ins_require_check CHECK (require IN ('aal2', 'phr')),
        CONSTRAINT pending_sign_ins_return_to_check CHECK (char_length(return_to) BETWEEN 1 AND 8192),
        CONSTRAINT pending_sign_ins_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
        CONSTRAINT pending_sign_ins_step_up_session_id_fkey FOREIGN KEY (step_up_session_id) REFERENCES sessions (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX pending_sign_ins_expires_at_idx ON pending_sign_ins (expires_at)`);
    await q.query(`CREATE INDEX pending_sign_ins_user_id_idx ON pending_sign_ins (user_id)`);
    await q.query(`CREATE INDEX pending_sign_ins_step_up_session_id_idx ON pending_sign_ins (step_up_session_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE pending_sign_ins`);
  }
}
