import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ApplicationEntity } from './application.entity.js';

/**
 * The `jti` of every client assertion (RFC 7523, `private_key_jwt`) accepted, kept until the assertion
 * expires: the primary key refuses the same one twice, on every instance (RFC 7523 §3 item 7).
 */
@Entity({ name: 'oauth_client_assertions' })
@Index('oauth_client_assertions_expires_at_idx', ['expiresAt'])
@Check('oauth_client_assertions_jti_check', `length(jti) BETWEEN 1 AND 256`)
export class ClientAssertionEntity {
  @PrimaryColumn({ name: 'application_id', type: 'uuid', primaryKeyConstraintName: 'oauth_client_assertions_pkey' })
  applicationId: string;

  @ManyToOne(() => ApplicationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'application_id', foreignKeyConstraintName: 'oauth_client_assertions_application_id_fkey' })
  application?: ApplicationEntity;

  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'oauth_client_assertions_pkey' })
  jti: string;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}
