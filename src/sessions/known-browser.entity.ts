import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';

/**
 * A browser a user signed in from: the SHA-256 of its device cookie (never the cookie), when it was first
 * and last used to sign in. A sign-in from a browser not listed for the user is a security notice.
 */
@Entity({ name: 'known_browsers' })
@Index('known_browsers_last_seen_at_idx', ['lastSeenAt'])
@Check('known_browsers_device_hash_check', `device_hash ~ '^[0-9a-f]{64}$'`)
@Check('known_browsers_browser_check', `char_length(browser) <= 100`)
export class KnownBrowserEntity {
  @PrimaryColumn({ name: 'user_id', type: 'uuid', primaryKeyConstraintName: 'known_browsers_pkey' })
  userId: string;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'known_browsers_user_id_fkey' })
  user?: UserEntity;

  /** SHA-256 (hex) of the device cookie's value. */
  @PrimaryColumn({ name: 'device_hash', type: 'text', primaryKeyConstraintName: 'known_browsers_pkey' })
  deviceHash: string;

  /** What it said it was at its last sign-in ("Firefox on Linux"). */
  @Column({ type: 'text' })
  browser: string;

  @Column({ name: 'first_seen_at', type: 'timestamptz' })
  firstSeenAt: Date;

  @Column({ name: 'last_seen_at', type: 'timestamptz' })
  lastSeenAt: Date;
}
