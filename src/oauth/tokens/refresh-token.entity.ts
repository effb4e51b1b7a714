import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { AuthMethod } from '../../auth/authentication-methods.js';
import { UserEntity } from '../../users/user.entity.js';
import { AccessTokenEntity } from './access-token.entity.js';
import { ApplicationEntity } from '../clients/application.entity.js';

/**
 * One refresh token (RFC 6749 §6). Every use replaces it by a new one of the same family (the chain
 * that started at one authorization code), so a used token presented again reveals a copy in other
 * hands and the family is revoked (RFC 9700 §4.14). Rows of used tokens are kept while the family
 * lives, for exactly that check.
 */
@Entity({ name: 'oauth_refresh_tokens' })
@Index('oauth_refresh_tokens_family_id_idx', ['familyId'])
@Index('oauth_refresh_tokens_user_application_idx', ['userId', 'applicationId'])
@Index('oauth_refresh_tokens_application_id_idx', ['applicationId'])
@Index('oauth_refresh_tokens_access_token_id_idx', ['accessTokenId'])
@Check('oauth_refresh_tokens_token_hash_check', `token_hash ~ '^[0-9a-f]{64}$'`)
@Check('oauth_refresh_tokens_expiry_check', `expires_at <= family_expires_at`)
@Check('oauth_refresh_tokens_amr_check', `cardinality(amr) >= 1 AND amr <@ ARRAY['pwd','otp','hwk','swk','mfa']::text[]`)
export class RefreshTokenEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'oauth_refresh_tokens_pkey' })
  id: string;

  @Column({ name: 'token_hash', type: 'text', unique: true })
  tokenHash: string;

  /** The id of the family's first token. */
  @Column({ name: 'family_id', type: 'uuid' })
  familyId: string;

  @Column({ name: 'application_id', type: 'uuid' })
  applicationId: string;

  @ManyToOne(() => ApplicationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'application_id', foreignKeyConstraintName: 'oauth_refresh_tokens_application_id_fkey' })
  application?: ApplicationEntity;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'oauth_refresh_tokens_user_id_fkey' })
  user?: UserEntity;

  /** What the user granted; a refresh may ask for fewer in its access token, never for more. */
  @Column({ type: 'text', array: true })
  scopes: string[];

  /** The resources the family was authorized for (RFC 8707), kept by every successor; empty, Agora's API. */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  resources: string[];

  /** When the user signed in for the authorization that started the family (id_token `auth_time`). */
  @Column({ name: 'auth_time', type: 'timestamptz' })
  authTime: Date;

  /** How the user signed in for that authorization (id_token `amr` and `acr`), kept by every successor. */
  @Column({ type: 'text', array: true, default: () => "'{pwd}'" })
  amr: AuthMethod[];

  /**
   * The browser session the family's authorization came from (the code's, or the device approval's):
   * the `sid` of the id_tokens a refresh issues. No foreign key: the session may end before the family.
   */
  @Column({ name: 'session_id', type: 'uuid', nullable: true })
  sessionId: string | null;

  /** The access token issued together with this refresh token, revoked with the family. */
  @Column({ name: 'access_token_id', type: 'uuid', nullable: true })
  accessTokenId: string | null;

  @ManyToOne(() => AccessTokenEntity, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'access_token_id', foreignKeyConstraintName: 'oauth_refresh_tokens_access_token_id_fkey' })
  accessToken?: AccessTokenEntity;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** The idle lifetime: unused by then, the token is dead. Never after `familyExpiresAt`. */
  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  /** The absolute lifetime of the family, counted from its first token. */
  @Column({ name: 'family_expires_at', type: 'timestamptz' })
  familyExpiresAt: Date;

  /** When it was exchanged for its successor. */
  @Column({ name: 'used_at', type: 'timestamptz', nullable: true })
  usedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
