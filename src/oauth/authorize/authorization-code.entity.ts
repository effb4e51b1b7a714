import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { AuthMethod } from '../../auth/authentication-methods.js';
import { UserEntity } from '../../users/user.entity.js';
import { AccessTokenEntity } from '../tokens/access-token.entity.js';
import { ApplicationEntity } from '../clients/application.entity.js';

@Entity({ name: 'oauth_authorization_codes' })
@Index('oauth_authorization_codes_expires_at_idx', ['expiresAt'])
@Index('oauth_authorization_codes_application_id_idx', ['applicationId'])
@Check('oauth_authorization_codes_code_hash_check', `code_hash ~ '^[0-9a-f]{64}$'`)
@Check('oauth_authorization_codes_code_challenge_check', `code_challenge ~ '^[A-Za-z0-9_-]{43}$'`)
@Check('oauth_authorization_codes_amr_check', `cardinality(amr) >= 1 AND amr <@ ARRAY['pwd','otp','hwk','swk','mfa']::text[]`)
export class AuthorizationCodeEntity {
  @PrimaryColumn({ name: 'code_hash', type: 'text', primaryKeyConstraintName: 'oauth_authorization_codes_pkey' })
  codeHash: string;

  @Column({ name: 'application_id', type: 'uuid' })
  applicationId: string;

  @ManyToOne(() => ApplicationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'application_id', foreignKeyConstraintName: 'oauth_authorization_codes_application_id_fkey' })
  application?: ApplicationEntity;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'oauth_authorization_codes_user_id_fkey' })
  user?: UserEntity;

  @Column({ name: 'redirect_uri', type: 'text' })
  redirectUri: string;

  @Column({ type: 'text', array: true })
  scopes: string[];

  /** The `resource` values the user approved (RFC 8707): BASE_URL and resource servers' identifiers; empty, Agora's API. */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  resources: string[];

  @Column({ type: 'text', nullable: true })
  nonce: string | null;

  @Column({ name: 'code_challenge', type: 'text' })
  codeChallenge: string;

  @Column({ name: 'auth_time', type: 'timestamptz' })
  authTime: Date;

  /** How the user signed in (the session's RFC 8176 methods): the id_token's `amr` and `acr`. */
  @Column({ type: 'text', array: true, default: () => "'{pwd}'" })
  amr: AuthMethod[];

  /**
   * The browser session that approved the code: the id_token's `sid` (back-channel logout). No foreign
   * key: the session may end before the code is redeemed, and the code must still be recognised.
   */
  @Column({ name: 'session_id', type: 'uuid', nullable: true })
  sessionId: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'consumed_at', type: 'timestamptz', nullable: true })
  consumedAt: Date | null;

  @Column({ name: 'access_token_id', type: 'uuid', nullable: true })
  accessTokenId: string | null;

  @ManyToOne(() => AccessTokenEntity, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'access_token_id', foreignKeyConstraintName: 'oauth_authorization_codes_access_token_id_fkey' })
  accessToken?: AccessTokenEntity;
}
