import { PERSONAL_TOKEN_SCOPES } from '../auth/scopes.js';

/**
 * RFC 9728 metadata of the API (GraphQL, the REST API), the one resource this server protects. Its
 * identifier is BASE_URL: every token is valid for every address under it. MCP clients send it back
 * as the RFC 8707 `resource` parameter (see resource-indicator.ts) and check that the address they
 * called is under it.
 */
export function protectedResourceMetadata(baseUrl: string): Record<string, unknown> {
  return {
    resource: baseUrl,
    authorization_servers: [baseUrl],
    // The scopes that open the API (openid, profile and email are about the user, not the API).
    scopes_supported: [...PERSONAL_TOKEN_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Agora API',
    resource_documentation: `${baseUrl}/explorer`,
  };
}
