import { DomainError } from '../errors/domain-error.js';

/** The user a request acts for. */
export interface AuthenticatedUser {
  id: string;
  username: string;
  name: string;
  email: string;
  /** Whether the address was verified (OpenID Connect `email_verified`). */
  emailVerified: boolean;
}

/** Who is calling and with which credential: the result of authentication, attached to the request. */
export interface Principal {
  /** The person the request acts for; null for a service account, which acts for an organizer and never for a person. */
  user: AuthenticatedUser | null;
  /**
   * A service account's token (`client_credentials`): the one organizer it acts for, as a member of it
   * whose powers its scopes bound (events.policy.ts, `service_account`).
   */
  serviceAccount?: { organizerId: string };
  scopes: ReadonlySet<string>;
  credential: {
    /**
     * `session`: the browser's sign-in session, accepted only where a route allows it (the API
     * explorer's calls to /graphql) and only with the page's CSRF token; `id` is the session's.
     */
    kind: 'personal_access_token' | 'oauth_access_token' | 'session';
    id: string;
    /** The OAuth application the token was issued to. */
    clientId?: string;
    /** When the credential stops working by itself, if ever. */
    expiresAt?: Date | null;
  };
}

export function hasAnyScope(principal: Principal, scopes: readonly string[]): boolean {
  return scopes.some((s) => principal.scopes.has(s));
}

/** The columns both token verifiers select: the user's, and the credential's scopes. */
export interface CredentialRow {
  user_id: string;
  username: string;
  name: string;
  email: string;
  email_verified: boolean;
  scopes: string[];
}

export function toPrincipal(row: CredentialRow, credential: Principal['credential']): Principal {
  return {
    user: { id: row.user_id, username: row.username, name: row.name, email: row.email, emailVerified: row.email_verified },
    scopes: new Set(row.scopes),
    credential,
  };
}

/** A service account's principal: its organizer, its scopes, its token; no user. */
export function serviceAccountPrincipal(organizerId: string, scopes: readonly string[], credential: Principal['credential']): Principal {
  return { user: null, serviceAccount: { organizerId }, scopes: new Set(scopes), credential };
}

/**
 * What only a person may do (their profile, their registrations, creating an organizer, UserInfo),
 * asked by a service account's token: 403 on every transport (FORBIDDEN in GraphQL).
 */
export class NotAPersonError extends DomainError {
  constructor() {
    super('forbidden', 'SERVICE_ACCOUNT', 'A service account acts for its organizer, never for a person: this needs a user’s token.');
  }
}

/** The person the request acts for; a service account has none (NotAPersonError). */
export function personOf(principal: Principal): AuthenticatedUser {
  if (!principal.user) throw new NotAPersonError();
  return principal.user;
}
