import { applyDecorators, SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'agora:public';

/**
 * Lets a route or a GraphQL root field run without credentials (it then sees public data only).
 * Everything else is denied to anonymous callers by the global AuthGuard.
 */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);

export const REQUIRED_SCOPES = 'agora:required-scopes';

/** A REST route that needs one of these scopes (GraphQL derives scopes from the operation type). */
export const RequireScopes = (...anyOf: string[]): MethodDecorator & ClassDecorator => SetMetadata(REQUIRED_SCOPES, anyOf);

export const OWN_AUTHENTICATION = 'agora:own-authentication';

/**
 * For protocol endpoints that authenticate callers themselves (OAuth token, revocation, introspection,
 * which read `Authorization: Basic` client credentials): the API guard leaves their headers alone.
 */
export const OwnAuthentication = (): MethodDecorator & ClassDecorator => SetMetadata(OWN_AUTHENTICATION, true);

export const IGNORES_CREDENTIALS = 'agora:ignores-credentials';

/**
 * A public route whose answer is the same for everyone (health probes, discovery, JWKS): the guard does
 * not read its credentials at all, so a probe that happens to send a token never touches the database
 * and these keep answering while the database is down.
 */
export const IgnoresCredentials = (): MethodDecorator & ClassDecorator => applyDecorators(Public(), SetMetadata(IGNORES_CREDENTIALS, true));

export const ACCEPTS_SESSION_CREDENTIAL = 'agora:accepts-session-credential';

/**
 * A route that also accepts the browser's sign-in session as an API credential, when the request
 * carries the page's CSRF token in `X-CSRF-Token` (the API explorer's calls to /graphql). Elsewhere a
 * session cookie is ignored by the API, as if there were none.
 */
export const AcceptsSessionCredential = (): MethodDecorator & ClassDecorator => SetMetadata(ACCEPTS_SESSION_CREDENTIAL, true);
