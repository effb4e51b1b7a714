import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** One attempt counted by AttemptThrottle against one subject (a row per subject the attempt counts for). */
@Entity({ name: 'counted_attempts' })
@Index('counted_attempts_subject_created_at_idx', ['subject', 'createdAt'])
@Check('counted_attempts_subject_check', `subject ~ '^[a-z][a-z-]{0,30}:[0-9a-f]{64}$'`)
export class CountedAttemptEntity {
  @PrimaryColumn({ type: 'bigint', generatedIdentity: 'ALWAYS', generated: 'identity', primaryKeyConstraintName: 'counted_attempts_pkey' })
  id: string;

  /**
   * `sign-in-account:` or `sign-in-ip:` (failed sign-ins), `signup:` (accounts created from an address) or `signup-failed:`
   * (sign-ups from an address refused as taken), `device-user:` or `device-ip:` (wrong user codes entered at
   * `/oauth/device`, per user and per address), `second-user:` or `second-ip:` (wrong second-step codes at
   * `/sign-in/second-factor`, per user and per address), `passkey-ip:` (passkey answers refused, per address),
   * and the SHA-256 of the normalised login or the address: no personal data at rest.
   */
  @Column({ type: 'text' })
  subject: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
