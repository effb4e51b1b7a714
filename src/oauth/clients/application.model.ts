import type { SigningAlg } from '../keys/signing-algorithms.js';
import { AccessTokenFormat, ApplicationEntity, ClientAuthMethod, ClientType, PublicKeySet } from './application.entity.js';

export {
  ACCESS_TOKEN_FORMATS,
  CLIENT_AUTH_METHODS,
  CLIENT_TYPES,
  type AccessTokenFormat,
  type ClientAuthMethod,
  type ClientType,
  type PublicKeySet,
} from './application.entity.js';

/** A registered OAuth application as its owner sees it: never the secret or its hash. */
export interface Application {
  id: string;
  /** Null until a user claims an application registered dynamically. */
  ownerId: string | null;
  /** A service account's organizer, which it acts for (`client_credentials`); null for other applications. */
  organizerId: string | null;
  name: string;
  clientId: string;
  clientType: ClientType;
  redirectUris: string[];
  scopes: string[];
  postLogoutRedirectUris: string[];
  /** Where logout tokens are posted (OpenID Connect Back-Channel Logout 1.0), or null. */
  backchannelLogoutUri: string | null;
  backchannelLogoutSessionRequired: boolean;
  /** Homepage (RFC 7591 `client_uri`), or null. */
  clientUri: string | null;
  /** https address of the logo (RFC 7591 `logo_uri`), or null. */
  logoUri: string | null;
  description: string | null;
  /** OpenID Connect subject type: `public` (the user's id) or `pairwise`. */
  subjectType: 'public' | 'pairwise';
  createdAt: Date;
  /** When the current secret was made, if not with the application. */
  secretRotatedAt: Date | null;
  /** The JWS algorithm of its id_tokens and JWT access tokens. */
  idTokenSignedResponseAlg: SigningAlg;
  /** What its access tokens are: `opaque` or `jwt` (RFC 9068). */
  accessTokenFormat: AccessTokenFormat;
  /** How the client authenticates: `none` for a public client. */
  tokenEndpointAuthMethod: ClientAuthMethod;
  /** A `private_key_jwt` client's public keys, by value or by address (one of them). */
  jwks: PublicKeySet | null;
  jwksUri: string | null;
  /** When the older of two secrets (a rotation under way) was made; null when there is one secret or none. */
  previousSecretCreatedAt: Date | null;
  /** Whether the client manages its registration itself (RFC 7592): it was registered dynamically. */
  selfManaged: boolean;
}

/**
 * An application that registered itself (dynamic registration, RFC 7591) and no user has claimed: nobody
 * at Agora answers for its name or its redirect URIs, which whoever registered it chose. Agora never
 * sends a browser to such an application on its own: only after the user has seen where it goes.
 */
export function isSelfRegistered(application: { ownerId: string | null; organizerId?: string | null }): boolean {
  return application.ownerId === null && !application.organizerId;
}

/** A service account: an organizer's application, which acts for it with `client_credentials` and never for a person. */
export function isServiceAccount(application: { organizerId: string | null }): boolean {
  return application.organizerId !== null;
}

export function toApplication(entity: ApplicationEntity): Application {
  return {
    id: entity.id,
    ownerId: entity.ownerId,
    organizerId: entity.organizerId,
    name: entity.name,
    clientId: entity.clientId,
    clientType: entity.clientType,
    redirectUris: entity.redirectUris,
    scopes: entity.scopes,
    postLogoutRedirectUris: entity.postLogoutRedirectUris,
    backchannelLogoutUri: entity.backchannelLogoutUri,
    backchannelLogoutSessionRequired: entity.backchannelLogoutSessionRequired,
    clientUri: entity.clientUri,
    logoUri: entity.logoUri,
    description: entity.description,
    subjectType: entity.subjectType,
    createdAt: entity.createdAt,
    secretRotatedAt: entity.secretRotatedAt,
    idTokenSignedResponseAlg: entity.idTokenSignedResponseAlg,
    accessTokenFormat: entity.accessTokenFormat,
    tokenEndpointAuthMethod: entity.clientType === 'public' ? 'none' : entity.tokenEndpointAuthMethod,
    jwks: entity.jwks ?? null,
    jwksUri: entity.jwksUri ?? null,
    previousSecretCreatedAt: entity.previousClientSecretHash ? (entity.previousSecretCreatedAt ?? entity.createdAt) : null,
    selfManaged: !!entity.registrationAccessTokenHash,
  };
}
