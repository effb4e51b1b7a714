import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { UserEntity } from '../../users/user.entity.js';
import { ApplicationEntity } from '../clients/application.entity.js';

/** A user's remembered approval of an application for some scopes and resource servers (revocable from the dashboard). */
@Entity({ name: 'oauth_grants' })
@Index('oauth_grants_application_id_idx', ['applicationId'])
export class GrantEntity {
  @PrimaryColumn({ name: 'user_id', type: 'uuid', primaryKeyConstraintName: 'oauth_grants_pkey' })
  userId: string;

  @PrimaryColumn({ name: 'application_id', type: 'uuid', primaryKeyConstraintName: 'oauth_grants_pkey' })
  applicationId: string;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'oauth_grants_user_id_fkey' })
  user?: UserEntity;

  @ManyToOne(() => ApplicationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'application_id', foreignKeyConstraintName: 'oauth_grants_application_id_fkey' })
  application?: ApplicationEntity;

  @Column({ type: 'text', array: true })
  scopes: string[];

  /**
   * The resource servers (RFC 8707) approved besides Agora's API, by id (`oauth_resource_servers`; a
   * deleted one's id stays, matching nothing), each with the scopes approved for it.
   */
  @Column({ name: 'resource_server_scopes', type: 'jsonb', default: () => "'{}'" })
  resourceServerScopes: Record<string, string[]>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
