import { OAuthError } from './oauth.errors.js';

/**
 * RFC 8707 resource indicators. Agora protects one resource, its API, identified by BASE_URL (the
 * `resource` of its RFC 9728 metadata, which MCP clients send back verbatim). A `resource` is accepted
 * when it is that identifier or an address under it (`{BASE_URL}/graphql`): every token is valid for
 * the whole API, so there is nothing narrower to bind it to. Anything else is `invalid_target`.
 * Absent, nothing is checked: the parameter is optional.
 */
export function checkResourceIndicator(resource: string | undefined, resourceIdentifier: string): void {
  if (resource === undefined) return;
  let requested: URL;
  try {
    requested = new URL(resource);
  } catch {
    throw new OAuthError('invalid_target', 'resource must be an absolute URI');
  }
  if (requested.hash || resource.includes('#')) throw new OAuthError('invalid_target', 'resource must not contain a fragment');
  const protectedResource = new URL(resourceIdentifier);
  const base = protectedResource.pathname.endsWith('/') ? protectedResource.pathname : `${protectedResource.pathname}/`;
  const path = requested.pathname.endsWith('/') ? requested.pathname : `${requested.pathname}/`;
  if (requested.origin !== protectedResource.origin || requested.search || !path.startsWith(base)) {
    throw new OAuthError('invalid_target', `Unknown resource: this server issues tokens for ${resourceIdentifier} only`);
  }
}
