/**
 * Agora's OAuth protected resources (RFC 9728). The API as a whole is identified by BASE_URL: every
 * token is valid for every address under it. Narrower resources are the endpoints a client may be
 * pointed at by their address alone (an MCP host given `{BASE_URL}/graphql`): each has its own
 * metadata document at the path-inserted address (§3.1), whose `resource` is exactly the address the
 * client called, as §3.3 requires clients to check. Every 401 and 403 of the API names the document of
 * the resource it was asked for in `WWW-Authenticate` (`resource_metadata`, §5.1), which is how a client
 * that knows nothing but the API's address finds the issuer.
 */
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/** The endpoints that are resources of their own (paths under BASE_URL); anything else is BASE_URL's. */
export const RESOURCE_PATHS: readonly string[] = ['/graphql', '/mcp'];

/**
 * What a client that has no token is told to ask for (RFC 6750 §3 `scope`, which MCP hosts use as
 * their request): the API, and a refresh token so that it need not come back to the browser every hour.
 */
export const API_CHALLENGE_SCOPE = 'api offline_access';

declare module 'fastify' {
  interface FastifyInstance {
    /** BASE_URL, set by configureApp: the identifier of the API as a whole. */
    protectedResourceBase?: string;
  }
}

/**
 * Where RFC 9728 §3.1 puts the metadata of the resource `resource`: the well-known path inserted
 * between the host and the resource's path, if it has one.
 */
export function protectedResourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return `${url.origin}${PROTECTED_RESOURCE_METADATA_PATH}${path}`;
}

/**
 * The resource a request (its path, without the query) was made to: `{BASE_URL}/graphql` for
 * /graphql, `{BASE_URL}/mcp` for the MCP endpoint, BASE_URL for every other address of the API (the REST API, UserInfo).
 */
export function resourceOfRequest(baseUrl: string, path: string): string {
  const resourcePath = RESOURCE_PATHS.find((p) => path === p || path.startsWith(`${p}/`));
  return resourcePath === undefined ? baseUrl : `${baseUrl}${resourcePath}`;
}

/** The resource whose metadata is served at `suffix` (the path after the well-known one), if any. */
export function resourceOfMetadataSuffix(baseUrl: string, suffix: string): string | undefined {
  if (suffix === '' || suffix === '/') return baseUrl;
  return RESOURCE_PATHS.includes(suffix.replace(/\/+$/, '')) ? `${baseUrl}${suffix.replace(/\/+$/, '')}` : undefined;
}
