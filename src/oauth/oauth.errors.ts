/** RFC 6749 §4.1.2.1 / §5.2 error codes (plus access_denied and friends). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable'
  /** A client over its rate limit at the token endpoint (429, `Retry-After`), as Auth0 answers it. */
  | 'too_many_requests'
  /** The device authorization grant (RFC 8628 §3.5) while it is polled. */
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  /** RFC 8707: a `resource` this server does not protect. */
  | 'invalid_target'
  /** RFC 7591 §3.2.2: a redirect URI, or other client metadata, that registration refuses. */
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  /** RFC 7592 §2: a registration access token missing, unknown, or another client's (401, a Bearer challenge). */
  | 'invalid_token'
  /** OpenID Connect Core §6: request objects, by value or by reference, which Agora does not support. */
  | 'request_not_supported'
  | 'request_uri_not_supported';

const STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  invalid_scope: 400,
  access_denied: 400,
  server_error: 500,
  temporarily_unavailable: 503,
  too_many_requests: 429,
  authorization_pending: 400,
  slow_down: 400,
  expired_token: 400,
  invalid_target: 400,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  invalid_token: 401,
  request_not_supported: 400,
  request_uri_not_supported: 400,
};

/** A protocol error that knows its wire code and HTTP status. */
export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    /** Sent as `Retry-After` (a 429 or 503 that knows when trying again can work). */
    readonly retryAfterSeconds?: number,
  ) {
    super(`${code}: ${description}`);
    this.name = 'OAuthError';
  }

  get status(): number {
    return STATUS[this.code];
  }

  get body(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.description };
  }
}

/**
 * An authorization request so broken that the user must not be sent back to the client (unknown
 * client, unregistered redirect URI): shown as an error page instead (RFC 6749 §4.1.2.1).
 */
export class AuthorizationPageError extends Error {
  constructor(readonly description: string) {
    super(description);
    this.name = 'AuthorizationPageError';
  }
}
