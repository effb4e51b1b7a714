/**
 * The endpoints a browser app calls from its own origin: the token, userinfo and revocation endpoints,
 * discovery, the keys, and the API it holds a token for. Never the authorization endpoint (a top-level
 * navigation, not a fetch) or any page. To give another endpoint the same CORS, add it here.
 */
export const CORS_ROUTES: ReadonlyMap<string, readonly string[]> = new Map([
  ['/oauth/token', ['POST']],
  ['/oauth/userinfo', ['GET', 'POST']],
  ['/oauth/revoke', ['POST']],
  ['/.well-known/openid-configuration', ['GET']],
  ['/.well-known/oauth-authorization-server', ['GET']],
  ['/.well-known/oauth-protected-resource', ['GET']],
  ['/oauth/discovery/keys', ['GET']],
  ['/graphql', ['POST']],
]);
