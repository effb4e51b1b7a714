import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type UserState = 'active' | 'blocked';

@Entity({ name: 'users' })
// Case-insensitive uniqueness lives in expression indexes that the migration creates.
@Index('users_username_lower_key', { synchronize: false })
@Index('users_email_lower_key', { synchronize: false })
@Check('users_username_check', `username ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{1,38}$'`)
@Check('users_name_check', `length(name) BETWEEN 1 AND 255`)
@Check('users_email_check', `length(email) BETWEEN 3 AND 254 AND position('@' in email) > 1`)
@Check('users_state_check', `state IN ('active', 'blocked')`)
@Check('users_totp_check', `totp_enabled_at IS NULL OR totp_secret IS NOT NULL`)
export class UserEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'text' })
  username: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  email: string;

  @Column({ name: 'password_hash', type: 'text' })
  passwordHash: string;

  @Column({ type: 'text', default: 'active' })
  state: UserState;

  /** Reminders and other messages not about the user's own seat (docs/mail.md). */
  @Column({ name: 'mail_reminders', type: 'boolean', default: true })
  mailReminders: boolean;

  /** When the owner of `email` proved it by following the link mailed to it; null until then. */
  @Column({ name: 'email_verified_at', type: 'timestamptz', nullable: true })
  emailVerifiedAt: Date | null;

  /** The TOTP secret, sealed under SECRET_KEY (purpose `totp-secrets`); set while enabling, kept once enabled. */
  @Column({ name: 'totp_secret', type: 'text', nullable: true })
  totpSecret: string | null;

  /** When the authenticator app was confirmed with a code; null: no TOTP second factor. */
  @Column({ name: 'totp_enabled_at', type: 'timestamptz', nullable: true })
  totpEnabledAt: Date | null;

  /** The 30-second step of the last code accepted: a code of that step or an earlier one is refused (no replay). */
  @Column({ name: 'totp_last_step', type: 'bigint', nullable: true })
  totpLastStep: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
