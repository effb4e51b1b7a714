import { PERSONAL_TOKEN_SCOPES } from '../../auth/scopes.js';

/**
 * RFC 9728 metadata of one of the resources Agora protects (src/auth/protected-resource.ts): the API as
 * a whole (`resource` BASE_URL) or one endpoint of it (`{BASE_URL}/graphql`), always the address the
 * client called. MCP clients send `resource` back as the RFC 8707 `resource` parameter (see
 * resource-indicator.ts) and check that the address they called is under it.
 */
export function protectedResourceMetadata(baseUrl: string, resource: string): Record<string, unknown> {
  return {
    resource,
    authorization_servers: [baseUrl],
    // The scopes that open the API (openid, profile and email are about the user, not the API), and
    // offline_access: clients that build their request from this list get a refresh token too.
    scopes_supported: [...PERSONAL_TOKEN_SCOPES, 'offline_access'],
    bearer_methods_supported: ['header'],
    resource_name: resource === baseUrl ? 'Agora API' : `Agora API (${new URL(resource).pathname})`,
    resource_documentation: `${baseUrl}/explorer`,
  };
}
