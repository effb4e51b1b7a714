import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';

@Entity({ name: 'oauth_applications' })
@Index('oauth_applications_owner_id_idx', ['ownerId'])
@Check('oauth_applications_name_check', `length(name) BETWEEN 1 AND 100`)
@Check('oauth_applications_client_secret_hash_check', `client_secret_hash ~ '^[0-9a-f]{64}$'`)
@Check('oauth_applications_redirect_uris_check', `cardinality(redirect_uris) BETWEEN 1 AND 10`)
@Check('oauth_applications_scopes_check', `cardinality(scopes) > 0`)
export class ApplicationEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'owner_id', type: 'uuid' })
  ownerId: string;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'owner_id', foreignKeyConstraintName: 'oauth_applications_owner_id_fkey' })
  owner?: UserEntity;

  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'client_id', type: 'text', unique: true })
  clientId: string;

  /** SHA-256 of the client secret; the secret itself is shown once. */
  @Column({ name: 'client_secret_hash', type: 'text' })
  clientSecretHash: string;

  @Column({ name: 'redirect_uris', type: 'text', array: true })
  redirectUris: string[];

  @Column({ type: 'text', array: true })
  scopes: string[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'secret_rotated_at', type: 'timestamptz', nullable: true })
  secretRotatedAt: Date | null;
}
