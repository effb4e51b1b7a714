import type { FastifyReply } from 'fastify';
import type { AuthRefusal } from '../metrics/metrics.js';
import { API_CHALLENGE_SCOPE, protectedResourceMetadataUrl, resourceOfRequest } from './protected-resource.js';

/**
 * Authentication and authorization failures of the API (GraphQL and REST). Every edge answers them
 * with the contract's exact bodies: 401 `{"message":"401 Unauthorized"}`, 403 insufficient_scope.
 */
export class AuthError extends Error {
  private constructor(
    readonly code: 'UNAUTHENTICATED' | 'INSUFFICIENT_SCOPE',
    /** For UNAUTHENTICATED: whether credentials were sent and rejected (RFC 6750 `invalid_token`). */
    readonly invalidCredentials: boolean,
    /** For INSUFFICIENT_SCOPE: the scopes any one of which would have been enough. */
    readonly requiredScopes: readonly string[],
  ) {
    super(code === 'UNAUTHENTICATED' ? '401 Unauthorized' : '403 Forbidden');
    this.name = 'AuthError';
  }

  static missingCredentials(): AuthError {
    return new AuthError('UNAUTHENTICATED', false, []);
  }

  static invalidCredentials(): AuthError {
    return new AuthError('UNAUTHENTICATED', true, []);
  }

  static insufficientScope(requiredScopes: readonly string[]): AuthError {
    return new AuthError('INSUFFICIENT_SCOPE', false, requiredScopes);
  }

  get status(): 401 | 403 {
    return this.code === 'UNAUTHENTICATED' ? 401 : 403;
  }

  /** The refusal as metrics count it: the RFC 6750 error, or none when no credentials were sent. */
  get reason(): AuthRefusal {
    if (this.code === 'INSUFFICIENT_SCOPE') return 'insufficient_scope';
    return this.invalidCredentials ? 'invalid_token' : 'missing_credentials';
  }

  /** The response body, exactly as the contract fixes it. */
  get body(): Record<string, string> {
    return this.code === 'UNAUTHENTICATED' ? { message: '401 Unauthorized' } : { message: '403 Forbidden', error: 'insufficient_scope' };
  }

  /**
   * The RFC 6750 §3 challenge: for a 401, `scope` when `challengeScope` is given (what a client with no
   * token should ask for); for a 403, the scopes that would have been enough; and the protected resource
   * metadata's address (RFC 9728 §5.1) when `resourceMetadataUrl` is given.
   */
  challenge(resourceMetadataUrl?: string, challengeScope?: string): string {
    const params: string[] = [];
    if (this.code === 'INSUFFICIENT_SCOPE') params.push('error="insufficient_scope"', `scope="${this.requiredScopes.join(' ')}"`);
    else {
      if (this.invalidCredentials) params.push('error="invalid_token"');
      if (challengeScope) params.push(`scope="${challengeScope}"`);
    }
    if (resourceMetadataUrl) params.push(`resource_metadata="${resourceMetadataUrl}"`);
    return params.length > 0 ? `Bearer ${params.join(', ')}` : 'Bearer';
  }
}

/**
 * The one HTTP answer to an AuthError, on every transport that authenticates with API credentials (REST,
 * GraphQL over HTTP, OAuth's UserInfo): the exact body, the RFC 6750 challenge naming the metadata of the
 * resource the request was made to (RFC 9728: `{BASE_URL}/graphql`'s for /graphql, BASE_URL's for the
 * rest) and, outside the OAuth endpoints, the scope to ask for; and `no-store`. `body` is the contract's
 * unless the transport has a shape of its own (the MCP endpoint's JSON-RPC error).
 */
export function sendAuthError(reply: FastifyReply, error: AuthError, body: unknown = error.body): void {
  const base = reply.server.protectedResourceBase;
  const path = reply.request.url.split('?')[0]!;
  const challenge = error.challenge(
    base === undefined ? undefined : protectedResourceMetadataUrl(resourceOfRequest(base, path)),
    path.startsWith('/oauth/') ? undefined : API_CHALLENGE_SCOPE,
  );
  void reply.status(error.status).header('www-authenticate', challenge).header('cache-control', 'no-store').send(body);
}
