import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import type { AuthMethod } from '../../auth/authentication-methods.js';
import { UserEntity } from '../../users/user.entity.js';
import { AccessTokenEntity } from '../tokens/access-token.entity.js';
import { ApplicationEntity } from '../clients/application.entity.js';

export type DeviceAuthorizationStatus = 'pending' | 'approved' | 'denied';

/**
 * A device authorization (RFC 8628): the device code its client polls with and the user code a person
 * enters at `/oauth/device`, both stored only as SHA-256 hashes.
 */
@Entity({ name: 'oauth_device_authorizations' })
@Index('oauth_device_authorizations_expires_at_idx', ['expiresAt'])
@Index('oauth_device_authorizations_application_id_idx', ['applicationId'])
@Check('oauth_device_authorizations_device_code_hash_check', `device_code_hash ~ '^[0-9a-f]{64}$'`)
@Check('oauth_device_authorizations_user_code_hash_check', `user_code_hash ~ '^[0-9a-f]{64}$'`)
@Check('oauth_device_authorizations_status_check', `status IN ('pending', 'approved', 'denied')`)
@Check('oauth_device_authorizations_interval_seconds_check', `interval_seconds > 0`)
@Check(
  'oauth_device_authorizations_amr_check',
  `amr IS NULL OR (cardinality(amr) >= 1 AND amr <@ ARRAY['pwd','otp','hwk','swk','mfa']::text[])`,
)
export class DeviceAuthorizationEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'device_code_hash', type: 'text', unique: true })
  deviceCodeHash: string;

  @Column({ name: 'user_code_hash', type: 'text', unique: true })
  userCodeHash: string;

  @Column({ name: 'application_id', type: 'uuid' })
  applicationId: string;

  @ManyToOne(() => ApplicationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'application_id', foreignKeyConstraintName: 'oauth_device_authorizations_application_id_fkey' })
  application?: ApplicationEntity;

  @Column({ type: 'text', array: true })
  scopes: string[];

  /** The `resource` values the client named (RFC 8707): BASE_URL and resource servers' identifiers; empty, Agora's API. */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  resources: string[];

  @Column({ type: 'text', default: 'pending' })
  status: DeviceAuthorizationStatus;

  /** Who approved or denied it. */
  @Column({ name: 'user_id', type: 'uuid', nullable: true })
  userId: string | null;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'oauth_device_authorizations_user_id_fkey' })
  user?: UserEntity;

  /** When that user signed in (the id_token's auth_time). */
  @Column({ name: 'auth_time', type: 'timestamptz', nullable: true })
  authTime: Date | null;

  /** How that user signed in (the id_token's `amr` and `acr`); null until decided. */
  @Column({ type: 'text', array: true, nullable: true })
  amr: AuthMethod[] | null;

  /** The least time between two polls; grows by 5 s at every `slow_down`. */
  /**
   * The browser session that approved it at the verification page: the id_token's `sid`. No foreign key,
   * as for a code: the session may end before the device polls.
   */
  @Column({ name: 'session_id', type: 'uuid', nullable: true })
  sessionId: string | null;

  @Column({ name: 'interval_seconds', type: 'integer' })
  intervalSeconds: number;

  @Column({ name: 'last_polled_at', type: 'timestamptz', nullable: true })
  lastPolledAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'decided_at', type: 'timestamptz', nullable: true })
  decidedAt: Date | null;

  /** When the client redeemed the approved device code for a token. */
  @Column({ name: 'consumed_at', type: 'timestamptz', nullable: true })
  consumedAt: Date | null;

  @Column({ name: 'access_token_id', type: 'uuid', nullable: true })
  accessTokenId: string | null;

  @ManyToOne(() => AccessTokenEntity, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'access_token_id', foreignKeyConstraintName: 'oauth_device_authorizations_access_token_id_fkey' })
  accessToken?: AccessTokenEntity;
}
