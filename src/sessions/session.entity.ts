import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';
import type { AuthMethod } from '../auth/authentication-methods.js';

@Entity({ name: 'sessions' })
@Index('sessions_user_id_idx', ['userId'])
@Check('sessions_token_hash_check', `token_hash ~ '^[0-9a-f]{64}$'`)
@Check('sessions_user_agent_check', `char_length(user_agent) <= 256`)
@Check('sessions_amr_check', `cardinality(amr) >= 1 AND amr <@ ARRAY['pwd','otp','hwk','swk','mfa']::text[]`)
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

  /** When the user last proved who they are in this session (the sign-in, or a later second step). */
  @Column({ name: 'auth_time', type: 'timestamptz' })
  authTime: Date;

  /**
   * When the user last typed the password again for a sensitive change (sudo mode: adding or removing a
   * passkey). Not a sign-in: auth_time and amr, which OpenID Connect reports, stay as they were.
   */
  @Column({ name: 'reauthenticated_at', type: 'timestamptz', nullable: true })
  reauthenticatedAt: Date | null;

  /** How: RFC 8176 method references (src/auth/authentication-methods.ts). */
  @Column({ type: 'text', array: true, default: () => "'{pwd}'" })
  amr: AuthMethod[];

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
