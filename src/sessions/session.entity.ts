import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';

@Entity({ name: 'sessions' })
@Index('sessions_user_id_idx', ['userId'])
@Check('sessions_token_hash_check', `token_hash ~ '^[0-9a-f]{64}$'`)
@Check('sessions_user_agent_check', `char_length(user_agent) <= 256`)
export class SessionEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** SHA-256 of the cookie value. */
  @Column({ name: 'token_hash', type: 'text', unique: true })
  tokenHash: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'sessions_user_id_fkey' })
  user?: UserEntity;

  @Column({ name: 'auth_time', type: 'timestamptz' })
  authTime: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_seen_at', type: 'timestamptz', default: () => 'now()' })
  lastSeenAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  /** The browser's User-Agent when it signed in, shortened: shown in the list of active sessions. */
  @Column({ name: 'user_agent', type: 'text', nullable: true })
  userAgent: string | null;
}
