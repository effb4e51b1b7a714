import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';

/** A user's passkey: a WebAuthn credential registered with @simplewebauthn/server (docs/account-security.md). */
@Entity({ name: 'passkeys' })
@Unique('passkeys_credential_id_key', ['credentialId'])
@Index('passkeys_user_id_idx', ['userId'])
@Check('passkeys_credential_id_check', `credential_id ~ '^[A-Za-z0-9_-]+$' AND char_length(credential_id) BETWEEN 16 AND 1366`)
@Check('passkeys_device_type_check', `device_type IN ('singleDevice', 'multiDevice')`)
@Check('passkeys_name_check', `char_length(name) BETWEEN 1 AND 64`)
export class PasskeyEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'passkeys_pkey' })
  id: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'passkeys_user_id_fkey' })
  user?: UserEntity;

  /** The credential's id as the browser gives it (base64url). */
  @Column({ name: 'credential_id', type: 'text' })
  credentialId: string;

  /** The COSE public key. */
  @Column({ name: 'public_key', type: 'bytea' })
  publicKey: Buffer;

  /** The authenticator's signature counter (0 for most passkeys, which do not count). */
  @Column({ name: 'sign_count', type: 'bigint', default: 0 })
  signCount: string;

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  transports: string[];

  /** `singleDevice` (a security key: amr `hwk`) or `multiDevice` (synced: amr `swk`). */
  @Column({ name: 'device_type', type: 'text' })
  deviceType: 'singleDevice' | 'multiDevice';

  @Column({ name: 'backed_up', type: 'boolean' })
  backedUp: boolean;

  /** The user's name for it ("YubiKey", "Phone"). */
  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;
}
