import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { UserEntity } from '../../users/user.entity.js';
import type { ResourceServerTokenFormat } from './resource-server.model.js';

/**
 * A resource server other than Agora's own API (RFC 8707): clients name its `identifier` as a
 * `resource`, and the tokens they get carry it as their audience. It introspects them with its own
 * credential (`introspectionId` and a secret, stored as SHA-256 like a client secret).
 */
@Entity({ name: 'oauth_resource_servers' })
@Index('oauth_resource_servers_owner_id_idx', ['ownerId'])
@Check('oauth_resource_servers_name_check', `length(name) BETWEEN 1 AND 100`)
@Check('oauth_resource_servers_identifier_check', `length(identifier) <= 2000`)
@Check('oauth_resource_servers_access_token_format_check', `access_token_format IN ('jwt', 'opaque')`)
@Check('oauth_resource_servers_introspection_secret_hash_check', `introspection_secret_hash ~ '^[0-9a-f]{64}$'`)
export class ResourceServerEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'oauth_resource_servers_pkey' })
  id: string;

  @Column({ name: 'owner_id', type: 'uuid' })
  ownerId: string;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'owner_id', foreignKeyConstraintName: 'oauth_resource_servers_owner_id_fkey' })
  owner?: UserEntity;

  @Column({ type: 'text' })
  name: string;

  /** The RFC 8707 resource URI, and the `aud` of its tokens: absolute, no query nor fragment. */
  @Index('oauth_resource_servers_identifier_key', { unique: true })
  @Column({ type: 'text' })
  identifier: string;

  @Column({ name: 'access_token_format', type: 'text', default: 'jwt' })
  accessTokenFormat: ResourceServerTokenFormat;

  /** The public half of its introspection credential (`rs_` and 32 hex digits): the client_id it sends. */
  @Index('oauth_resource_servers_introspection_id_key', { unique: true })
  @Column({ name: 'introspection_id', type: 'text' })
  introspectionId: string;

  @Column({ name: 'introspection_secret_hash', type: 'text' })
  introspectionSecretHash: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
