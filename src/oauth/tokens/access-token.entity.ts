import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { UserEntity } from '../../users/user.entity.js';
import { ApplicationEntity } from '../clients/application.entity.js';

@Entity({ name: 'oauth_access_tokens' })
@Index('oauth_access_tokens_user_application_idx', ['userId', 'applicationId'])
@Index('oauth_access_tokens_application_id_idx', ['applicationId'])
@Check('oauth_access_tokens_token_hash_check', `token_hash ~ '^[0-9a-f]{64}$'`)
export class AccessTokenEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'token_hash', type: 'text', unique: true })
  tokenHash: string;

  @Column({ name: 'application_id', type: 'uuid' })
  applicationId: string;

  @ManyToOne(() => ApplicationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'application_id', foreignKeyConstraintName: 'oauth_access_tokens_application_id_fkey' })
  application?: ApplicationEntity;

  /** Null for a service account's token (`client_credentials`): it acts for its organizer, never for a person. */
  @Column({ name: 'user_id', type: 'uuid', nullable: true })
  userId: string | null;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'oauth_access_tokens_user_id_fkey' })
  user?: UserEntity;

  @Column({ type: 'text', array: true })
  scopes: string[];

  /**
   * Where the token may be used (RFC 8707): Agora's API (BASE_URL) and resource servers' identifiers.
   * Empty: Agora's API alone, as every token was before resource servers.
   */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  audience: string[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
