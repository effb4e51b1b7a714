import { OAuthError } from './oauth.errors.js';

/**
 * RFC 8707 resource indicators, the part that needs no database. Agora's own API is identified by
 * BASE_URL (the `resource` of its RFC 9728 metadata, which MCP clients send back verbatim); a `resource`
 * that is that identifier or an address under it (`{BASE_URL}/graphql`) names it, since every token is
 * valid for the whole API. Other resources are registered resource servers (src/oauth/resources/), named
 * by their exact identifier.
 */

/** The value as an absolute URI without a fragment (RFC 8707 §2), or `invalid_target`. */
export function parseResourceIndicator(resource: string): URL {
  let requested: URL;
  try {
    requested = new URL(resource);
  } catch {
    throw new OAuthError('invalid_target', 'resource must be an absolute URI');
  }
  if (requested.hash || resource.includes('#')) throw new OAuthError('invalid_target', 'resource must not contain a fragment');
  return requested;
}

/** Whether this address is Agora's API: BASE_URL, or a path under it, without a query. */
export function isAgorasResource(requested: URL, resourceIdentifier: string): boolean {
  const protectedResource = new URL(resourceIdentifier);
  const base = protectedResource.pathname.endsWith('/') ? protectedResource.pathname : `${protectedResource.pathname}/`;
  const path = requested.pathname.endsWith('/') ? requested.pathname : `${requested.pathname}/`;
  return requested.origin === protectedResource.origin && !requested.search && path.startsWith(base);
}

/**
 * RFC 8707 §2.2: the resources a token may be for, out of those authorized (empty: Agora's API alone,
 * identified by `agora`). Asked for (`requested`, not empty): each must have been authorized, else
 * `invalid_target`; not asked for: every authorized one.
 */
export function narrowResources(authorized: readonly string[], requested: readonly string[], agora: string): string[] {
  if (requested.length === 0) return [...authorized];
  const allowed = authorized.length === 0 ? [agora] : authorized;
  const beyond = requested.filter((r) => !allowed.includes(r));
  if (beyond.length > 0) throw new OAuthError('invalid_target', `Not authorized for this resource: ${beyond.join(' ')}`);
  return [...requested];
}

/** Whether a token with this recorded audience is for Agora's API (empty: the tokens of before resource servers). */
export function audienceIncludesAgora(audience: readonly string[], agora: string): boolean {
  return audience.length === 0 || audience.includes(agora);
}
