import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';

export const LINK_PURPOSES = ['verify-email', 'change-email', 'reset-password'] as const;
/** What a mailed link does: verify the account's address, make a new address the account's, or reset the password. */
export type LinkPurpose = (typeof LINK_PURPOSES)[number];

/** One link mailed to an address: never its token (the id with an HMAC under SECRET_KEY, AccountLinks). */
@Entity({ name: 'account_links' })
@Index('account_links_user_id_purpose_idx', ['userId', 'purpose'])
@Index('account_links_expires_at_idx', ['expiresAt'])
@Check('account_links_purpose_check', `purpose IN ('verify-email', 'change-email', 'reset-password')`)
@Check('account_links_email_check', `length(email) BETWEEN 3 AND 254`)
@Check('account_links_expires_at_check', `expires_at > created_at`)
export class AccountLinkEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'account_links_pkey' })
  id: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'account_links_user_id_fkey' })
  user?: UserEntity;

  @Column({ type: 'text' })
  purpose: LinkPurpose;

  /** The address the link was mailed to, which following it proves (for `change-email`, the new one). */
  @Column({ type: 'text' })
  email: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  /** When it was followed, or ended by a newer link or a reset; a link with one never works again. */
  @Column({ name: 'used_at', type: 'timestamptz', nullable: true })
  usedAt: Date | null;
}
