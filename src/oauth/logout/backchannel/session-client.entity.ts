import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { SessionEntity } from '../../../sessions/session.entity.js';
import { UserEntity } from '../../../users/user.entity.js';
import { ApplicationEntity } from '../../clients/application.entity.js';

/**
 * An application that received an id_token with a `sid` in a browser session: told by a logout token
 * when that session ends (OpenID Connect Back-Channel Logout 1.0). Goes with the session (an expired
 * one is ended by housekeeping, which tells too) or with the application.
 */
@Entity({ name: 'oauth_session_clients' })
@Index('oauth_session_clients_application_id_idx', ['applicationId'])
export class SessionClientEntity {
  @PrimaryColumn({ name: 'session_id', type: 'uuid', primaryKeyConstraintName: 'oauth_session_clients_pkey' })
  sessionId: string;

  @PrimaryColumn({ name: 'application_id', type: 'uuid', primaryKeyConstraintName: 'oauth_session_clients_pkey' })
  applicationId: string;

  @ManyToOne(() => SessionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id', foreignKeyConstraintName: 'oauth_session_clients_session_id_fkey' })
  session?: SessionEntity;

  @ManyToOne(() => ApplicationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'application_id', foreignKeyConstraintName: 'oauth_session_clients_application_id_fkey' })
  application?: ApplicationEntity;

  /** The session's user: the logout token's `sub`. */
  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'oauth_session_clients_user_id_fkey' })
  user?: UserEntity;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
