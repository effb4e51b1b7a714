/**
 * The API (GraphQL, the REST API, UserInfo) is one OAuth protected resource, identified by BASE_URL.
 * Its RFC 9728 metadata document is served at this path (src/oauth/metadata.controller.ts), and every
 * 401 and 403 of the API names it in `WWW-Authenticate` (`resource_metadata`, RFC 9728 §5.1), which is
 * how a client that knows nothing but the API's address (an MCP client, for one) finds the issuer.
 */
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

declare module 'fastify' {
  interface FastifyInstance {
    /** The absolute URL of the protected resource metadata, set by configureApp. */
    protectedResourceMetadataUrl?: string;
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
