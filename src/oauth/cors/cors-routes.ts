import { PROTECTED_RESOURCE_METADATA_PATH, RESOURCE_PATHS } from '../../auth/protected-resource.js';

/** Who may call a CORS route from a browser: the origins of registered public clients, or any origin. */
export type CorsAudience = 'clients' | 'anyone';

export interface CorsRoute {
  methods: readonly string[];
  audience: CorsAudience;
}

const clients = (...methods: string[]): CorsRoute => ({ methods, audience: 'clients' });
const anyone = (...methods: string[]): CorsRoute => ({ methods, audience: 'anyone' });

/**
 * The endpoints a browser app calls from its own origin. The token, userinfo and revocation endpoints and
 * the API it holds a token for answer the origins of registered public clients only. Discovery, the
 * keys, the protected resources' metadata and dynamic registration answer any origin
 * (`Access-Control-Allow-Origin: *`, as node-oidc-provider and the MCP authorization spec's anchors do):
 * they are public documents, or open to anyone anyway, and a browser-based MCP client (MCP Inspector)
 * must read them before it has registered. Never the authorization endpoint (a top-level navigation, not
 * a fetch) or any page. To give another endpoint CORS, add it here.
 */
export const CORS_ROUTES: ReadonlyMap<string, CorsRoute> = new Map([
  ['/oauth/token', clients('POST')],
  ['/oauth/userinfo', clients('GET', 'POST')],
  ['/oauth/revoke', clients('POST')],
  ['/graphql', clients('POST')],
  ['/mcp', clients('POST', 'GET', 'DELETE')],
  ['/.well-known/openid-configuration', anyone('GET')],
  ['/.well-known/oauth-authorization-server', anyone('GET')],
  [PROTECTED_RESOURCE_METADATA_PATH, anyone('GET')],
  ...RESOURCE_PATHS.map((path): [string, CorsRoute] => [`${PROTECTED_RESOURCE_METADATA_PATH}${path}`, anyone('GET')]),
  ['/oauth/discovery/keys', anyone('GET')],
  ['/oauth/register', anyone('POST')],
]);
