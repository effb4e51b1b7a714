import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';

@Entity({ name: 'personal_access_tokens' })
@Index('personal_access_tokens_user_id_idx', ['userId', 'createdAt'])
@Check('personal_access_tokens_name_check', `length(name) BETWEEN 1 AND 100`)
@Check('personal_access_tokens_token_hash_check', `token_hash ~ '^[0-9a-f]{64}$'`)
@Check('personal_access_tokens_scopes_check', `cardinality(scopes) > 0`)
export class PersonalTokenEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'personal_access_tokens_user_id_fkey' })
  user?: UserEntity;

  @Column({ type: 'text' })
  name: string;

  /** SHA-256 of the whole token, hex. The token itself is never stored. */
  @Column({ name: 'token_hash', type: 'text', unique: true })
  tokenHash: string;

  @Column({ type: 'text', array: true })
  scopes: string[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
