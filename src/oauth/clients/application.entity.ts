import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { UserEntity } from '../../users/user.entity.js';
import type { SigningAlg } from '../keys/signing-algorithms.js';

export const CLIENT_TYPES = ['confidential', 'public'] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

/** `opaque`: an `agora_oat_` token only Agora reads. `jwt`: an RFC 9068 JWT access token any resource server can verify. */
export const ACCESS_TOKEN_FORMATS = ['opaque', 'jwt'] as const;
export type AccessTokenFormat = (typeof ACCESS_TOKEN_FORMATS)[number];
/**
 * How a client authenticates at the token, revocation, introspection and device authorization endpoints
 * (RFC 7591 §2): with its secret (`client_secret_basic` and `client_secret_post` both work for such a
 * client; the one it registered with is kept), with an assertion signed by its key (`private_key_jwt`,
 * RFC 7523), or not at all (`none`, a public client).
 */
export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'] as const;
export type ClientAuthMethod = (typeof CLIENT_AUTH_METHODS)[number];

/** A JSON Web Key Set (RFC 7517 §5) of public keys. */
export interface PublicKeySet {
  keys: Record<string, string | number | boolean | string[]>[];
}
/** OpenID Connect Core §8: the `sub` an application sees (src/oauth/subjects/). */
export const SUBJECT_TYPES = ['public', 'pairwise'] as const;
export type SubjectType = (typeof SUBJECT_TYPES)[number];

@Entity({ name: 'oauth_applications' })
@Index('oauth_applications_owner_id_idx', ['ownerId'])
@Index('oauth_applications_unclaimed_idx', ['registeredFrom', 'createdAt'], { where: 'owner_id IS NULL' })
@Check('oauth_applications_name_check', `length(name) BETWEEN 1 AND 100`)
@Check(
  'oauth_applications_client_secret_hash_check',
  `(client_type = 'confidential' AND token_endpoint_auth_method <> 'private_key_jwt') = (client_secret_hash IS NOT NULL) AND (client_secret_hash IS NULL OR client_secret_hash ~ '^[0-9a-f]{64}$')`,
)
@Check('oauth_applications_access_token_format_check', `access_token_format IN ('opaque', 'jwt')`)
@Check(
  'oauth_applications_previous_client_secret_hash_check',
  `previous_client_secret_hash IS NULL OR (client_secret_hash IS NOT NULL AND previous_client_secret_hash ~ '^[0-9a-f]{64}$')`,
)
@Check(
  'oauth_applications_token_endpoint_auth_method_check',
  `token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none') AND (token_endpoint_auth_method <> 'private_key_jwt' OR client_type = 'confidential')`,
)
@Check(
  'oauth_applications_jwks_check',
  `(token_endpoint_auth_method = 'private_key_jwt') = (jwks IS NOT NULL OR jwks_uri IS NOT NULL) AND (jwks IS NULL OR jwks_uri IS NULL)`,
)
@Check('oauth_applications_registration_access_token_hash_check', `registration_access_token_hash ~ '^[0-9a-f]{64}$'`)
@Check('oauth_applications_client_type_check', `client_type IN ('confidential', 'public')`)
@Check('oauth_applications_post_logout_redirect_uris_check', `cardinality(post_logout_redirect_uris) <= 10`)
@Check('oauth_applications_id_token_signed_response_alg_check', `id_token_signed_response_alg IN ('RS256', 'ES256', 'EdDSA')`)
@Check(
  'oauth_applications_redirect_uris_check',
  `CASE WHEN organizer_id IS NULL THEN cardinality(redirect_uris) BETWEEN 1 AND 10 ELSE cardinality(redirect_uris) = 0 END`,
)
@Check('oauth_applications_scopes_check', `cardinality(scopes) > 0`)
@Check(
  'oauth_applications_service_account_check',
  `organizer_id IS NULL OR (client_type = 'confidential' AND owner_id IS NULL AND scopes <@ ARRAY['api', 'read_api']::text[])`,
)
@Index('oauth_applications_organizer_id_idx', ['organizerId'], { where: 'organizer_id IS NOT NULL' })
@Check('oauth_applications_client_uri_check', `length(client_uri) <= 500`)
@Check('oauth_applications_logo_uri_check', `length(logo_uri) <= 500 AND logo_uri LIKE 'https://%'`)
@Check('oauth_applications_description_check', `length(description) <= 500`)
@Check('oauth_applications_subject_type_check', `subject_type IN ('public', 'pairwise')`)
export class ApplicationEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** Null for an application registered dynamically (RFC 7591) and not yet claimed by a user. */
  @Column({ name: 'owner_id', type: 'uuid', nullable: true })
  ownerId: string | null;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'owner_id', foreignKeyConstraintName: 'oauth_applications_owner_id_fkey' })
  owner?: UserEntity;

  /**
   * Set for a service account: the organizer it acts for (`client_credentials`, never for a person).
   * Always confidential, owned by no user, no redirect URIs; `scopes` are what the organizer's owner
   * granted it (`api`, `read_api`).
   */
  @Column({ name: 'organizer_id', type: 'uuid', nullable: true })
  organizerId: string | null;

  // Named, not imported: the events feature depends on this one, and folders never depend on each other.
  @ManyToOne('OrganizerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organizer_id', foreignKeyConstraintName: 'oauth_applications_organizer_id_fkey' })
  organizer?: { id: string };

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

  /**
   * The secret that worked before the current one, while the owner rotates (both work until one is
   * deleted); SHA-256 like the current one.
   */
  @Column({ name: 'previous_client_secret_hash', type: 'text', nullable: true })
  previousClientSecretHash: string | null;

  /** When the previous secret was made. */
  @Column({ name: 'previous_secret_created_at', type: 'timestamptz', nullable: true })
  previousSecretCreatedAt: Date | null;

  /** How the client authenticates (CLIENT_AUTH_METHODS); `none` for every public client. */
  @Column({ name: 'token_endpoint_auth_method', type: 'text', default: 'client_secret_basic' })
  tokenEndpointAuthMethod: ClientAuthMethod;

  /** A `private_key_jwt` client's public keys given by value; null when given by `jwks_uri` or for other clients. */
  @Column({ type: 'jsonb', nullable: true })
  jwks: PublicKeySet | null;

  /** Where a `private_key_jwt` client publishes its public keys (fetched, cached, checked like a webhook's address). */
  @Column({ name: 'jwks_uri', type: 'text', nullable: true })
  jwksUri: string | null;

  /**
   * SHA-256 of the registration access token (RFC 7592) a dynamically registered client manages its
   * registration with; null for the others. The token itself is shown once, in the registration response.
   */
  @Column({ name: 'registration_access_token_hash', type: 'text', nullable: true })
  registrationAccessTokenHash: string | null;

  @Column({ name: 'redirect_uris', type: 'text', array: true })
  redirectUris: string[];

  @Column({ type: 'text', array: true })
  scopes: string[];

  /** Where RP-initiated logout may send the browser back to (exact match, like redirect URIs). */
  @Column({ name: 'post_logout_redirect_uris', type: 'text', array: true, default: () => "'{}'" })
  postLogoutRedirectUris: string[];

  /** The application's homepage (RFC 7591 `client_uri`), shown to users as a link; null when not given. */
  @Column({ name: 'client_uri', type: 'text', nullable: true })
  clientUri: string | null;

  /** An https address of the application's logo (RFC 7591 `logo_uri`), shown on the consent page; null when not given. */
  @Column({ name: 'logo_uri', type: 'text', nullable: true })
  logoUri: string | null;

  /** What the application does, in its developer's words, shown on the consent page; null when not given. */
  @Column({ type: 'text', nullable: true })
  description: string | null;

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

  /** The JWS algorithm of the application's id_tokens and JWT access tokens (OpenID Connect Registration §2). */
  @Column({ name: 'id_token_signed_response_alg', type: 'text', default: 'RS256' })
  idTokenSignedResponseAlg: SigningAlg;

  /** What the token endpoint issues the application as access tokens. */
  @Column({ name: 'access_token_format', type: 'text', default: 'opaque' })
  accessTokenFormat: AccessTokenFormat;

  /**
   * OpenID Connect Back-Channel Logout 1.0: where Agora posts a logout token when a browser session in
   * which the application got an id_token ends; null: not told.
   */
  @Column({ name: 'backchannel_logout_uri', type: 'text', nullable: true })
  backchannelLogoutUri: string | null;

  /** Whether the application needs `sid` in logout tokens (Agora always sends it); kept as registered. */
  @Column({ name: 'backchannel_logout_session_required', type: 'boolean', default: false })
  backchannelLogoutSessionRequired: boolean;

  /**
   * `public`: the user's id is the `sub` of its tokens; `pairwise`: a value of its own sector (the host of
   * its redirect URIs), which other sectors cannot match (OpenID Connect Core §8.1).
   */
  @Column({ name: 'subject_type', type: 'text', default: 'public' })
  subjectType: SubjectType;

  /** When a user first consented to the application: from then on its origins are trusted for CORS, claimed or not. */
  @Column({ name: 'first_consented_at', type: 'timestamptz', nullable: true })
  firstConsentedAt: Date | null;
}
