import { Check, Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';

/** One single-use recovery code of a user with a second factor: its HMAC-SHA256 under a key derived from SECRET_KEY, never the code. */
@Entity({ name: 'recovery_codes' })
@Unique('recovery_codes_user_id_code_hash_key', ['userId', 'codeHash'])
@Check('recovery_codes_code_hash_check', `code_hash ~ '^[0-9a-f]{64}$'`)
export class RecoveryCodeEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'recovery_codes_pkey' })
  id: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'recovery_codes_user_id_fkey' })
  user?: UserEntity;

  @Column({ name: 'code_hash', type: 'text' })
  codeHash: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** When it was used to sign in; a used code never works again. */
  @Column({ name: 'used_at', type: 'timestamptz', nullable: true })
  usedAt: Date | null;
}
