import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';
import type { AuthMethod } from '../auth/authentication-methods.js';
import { SessionEntity } from './session.entity.js';

/**
 * A sign-in waiting for its second step: the password was right (or, for a step-up, the browser is
 * signed in already) and a code or a passkey is still to come. The browser holds it by a cookie; this
 * row keeps the cookie's SHA-256.
 */
@Entity({ name: 'pending_sign_ins' })
@Unique('pending_sign_ins_token_hash_key', ['tokenHash'])
@Index('pending_sign_ins_expires_at_idx', ['expiresAt'])
@Index('pending_sign_ins_user_id_idx', ['userId'])
@Index('pending_sign_ins_step_up_session_id_idx', ['stepUpSessionId'])
@Check('pending_sign_ins_token_hash_check', `token_hash ~ '^[0-9a-f]{64}$'`)
@Check('pending_sign_ins_amr_check', `amr <@ ARRAY['pwd','otp','hwk','swk','mfa']::text[]`)
@Check('pending_sign_ins_require_check', `require IN ('aal2', 'phr')`)
@Check('pending_sign_ins_return_to_check', `char_length(return_to) BETWEEN 1 AND 8192`)
export class PendingSignInEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pending_sign_ins_pkey' })
  id: string;

  @Column({ name: 'token_hash', type: 'text' })
  tokenHash: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'pending_sign_ins_user_id_fkey' })
  user?: UserEntity;

  /** The methods proved so far (`['pwd']` after the password; a step-up: the session's). */
  @Column({ type: 'text', array: true })
  amr: AuthMethod[];

  /** Where the browser goes once the second step succeeds (a local path, `safeReturnTo`). */
  @Column({ name: 'return_to', type: 'text' })
  returnTo: string;

  /** A step-up: the signed-in session that gets the new methods; null: a new sign-in. */
  @Column({ name: 'step_up_session_id', type: 'uuid', nullable: true })
  stepUpSessionId: string | null;

  @ManyToOne(() => SessionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'step_up_session_id', foreignKeyConstraintName: 'pending_sign_ins_step_up_session_id_fkey' })
  stepUpSession?: SessionEntity;

  /** What will do: `aal2` any second factor, `phr` a passkey only (an application's acr_values). */
  @Column({ type: 'text', default: 'aal2' })
  require: 'aal2' | 'phr';

  /** Wrong codes entered for it; at PENDING_SIGN_IN_MAX_FAILURES it ends and the password is asked again. */
  @Column({ type: 'integer', default: 0 })
  failures: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}
