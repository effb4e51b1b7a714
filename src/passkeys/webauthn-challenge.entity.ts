import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';

/** What a challenge is for: adding a passkey, signing in with one alone, or the second step of a sign-in. */
export type ChallengePurpose = 'registration' | 'sign-in' | 'second-factor';

/** A WebAuthn challenge the server issued: used once, within its expiry, for what it is bound to. */
@Entity({ name: 'webauthn_challenges' })
@Index('webauthn_challenges_expires_at_idx', ['expiresAt'])
@Check('webauthn_challenges_challenge_check', `challenge ~ '^[A-Za-z0-9_-]{43}$'`)
@Check('webauthn_challenges_purpose_check', `purpose IN ('registration', 'sign-in', 'second-factor')`)
@Check('webauthn_challenges_bound_to_check', `char_length(bound_to) BETWEEN 1 AND 100`)
export class WebAuthnChallengeEntity {
  /** 32 random bytes, base64url: what the authenticator signs. */
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'webauthn_challenges_pkey' })
  challenge: string;

  @Column({ type: 'text' })
  purpose: ChallengePurpose;

  /** `session:<id>`, `pending:<id>` or `anyone` (the sign-in page): the answer must come from the same. */
  @Column({ name: 'bound_to', type: 'text' })
  boundTo: string;

  /** The user whose passkeys may answer (registration, second step); null for a usernameless sign-in. */
  @Column({ name: 'user_id', type: 'uuid', nullable: true })
  userId: string | null;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'webauthn_challenges_user_id_fkey' })
  user?: UserEntity;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}
