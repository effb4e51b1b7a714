import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';

export const CLIENT_TYPES = ['confidential', 'public'] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

@Entity({ name: 'oauth_applications' })
@Index('oauth_applications_owner_id_idx', ['ownerId'])
@Index('oauth_applications_unclaimed_idx', ['registeredFrom', 'createdAt'], { where: 'owner_id IS NULL' })
@Check('oauth_applications_name_check', `length(name) BETWEEN 1 AND 100`)
@Check(
  'oauth_applications_client_secret_hash_check',
  `(client_type = 'confidential') = (client_secret_hash IS NOT NULL) AND (client_secret_hash IS NULL OR client_secret_hash ~ '^[0-9a-f]{64}$')`,
)
@Check('oauth_applications_client_type_check', `client_type IN ('confidential', 'public')`)
@Check('oauth_applications_post_logout_redirect_uris_check', `cardinality(post_logout_redirect_uris) <= 10`)
@Check('oauth_applications_redirect_uris_check', `cardinality(redirect_uris) BETWEEN 1 AND 10`)
@Check('oauth_applications_scopes_check', `cardinality(scopes) > 0`)
export class ApplicationEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** Null for an application registered dynamically (RFC 7591) and not yet claimed by a user. */
  @Column({ name: 'owner_id', type: 'uuid', nullable: true })
  ownerId: string | null;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'owner_id', foreignKeyConstraintName: 'oauth_applications_owner_id_fkey' })
  owner?: UserEntity;

  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'client_id', type: 'text', unique: true })
  clientId: string;

  /**
   * `confidential`: authenticates at the token endpoint with its secret (a server-side web app).
   * `public`: cannot keep a secret (native, single-page, command-line) and proves itself with PKCE alone.
   */
  @Column({ name: 'client_type', type: 'text', default: 'confidential' })
  clientType: ClientType;

  /** SHA-256 of the client secret (confidential clients only); the secret itself is shown once. */
  @Column({ name: 'client_secret_hash', type: 'text', nullable: true })
  clientSecretHash: string | null;

  @Column({ name: 'redirect_uris', type: 'text', array: true })
  redirectUris: string[];

  @Column({ type: 'text', array: true })
  scopes: string[];

  /** Where RP-initiated logout may send the browser back to (exact match, like redirect URIs). */
  @Column({ name: 'post_logout_redirect_uris', type: 'text', array: true, default: () => "'{}'" })
  postLogoutRedirectUris: string[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'secret_rotated_at', type: 'timestamptz', nullable: true })
  secretRotatedAt: Date | null;

  /**
   * The network (IPv4 /24, IPv6 /48) an application registered dynamically came from, counted against
   * OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK while it is unclaimed; null for the others.
   */
  @Column({ name: 'registered_from', type: 'text', nullable: true })
  registeredFrom: string | null;

  /** When a user first consented to the application: from then on its origins are trusted for CORS, claimed or not. */
  @Column({ name: 'first_consented_at', type: 'timestamptz', nullable: true })
  firstConsentedAt: Date | null;
}
