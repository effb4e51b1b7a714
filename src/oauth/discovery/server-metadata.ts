import { SCOPES } from '../../auth/scopes.js';
import { OIDC_SUPPORTED, PROMPTS, SUPPORTED } from '../capabilities.js';

export interface MetadataOptions {
  issuer: string;
  /** Whether dynamic client registration (RFC 7591) is on. */
  registration: boolean;
}

function endpoints(issuer: string, paths: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(paths).map(([name, path]) => [name, `${issuer}${path}`]));
}

/** RFC 8414 authorization server metadata (`/.well-known/oauth-authorization-server`). */
export function authorizationServerMetadata({ issuer, registration }: MetadataOptions): Record<string, unknown> {
  return {
    issuer,
    ...endpoints(issuer, SUPPORTED.endpoints),
    ...(registration && { registration_endpoint: `${issuer}${SUPPORTED.registrationEndpoint}` }),
    scopes_supported: Object.keys(SCOPES),
    response_types_supported: [...SUPPORTED.responseTypes],
    response_modes_supported: [...SUPPORTED.responseModes],
    grant_types_supported: [...SUPPORTED.grantTypes],
    token_endpoint_auth_methods_supported: [...SUPPORTED.clientAuthMethods],
    token_endpoint_auth_signing_alg_values_supported: [...SUPPORTED.clientAssertionSigningAlgs],
    revocation_endpoint_auth_methods_supported: [...SUPPORTED.clientAuthMethods],
    revocation_endpoint_auth_signing_alg_values_supported: [...SUPPORTED.clientAssertionSigningAlgs],
    introspection_endpoint_auth_methods_supported: [...SUPPORTED.clientAuthMethods],
    introspection_endpoint_auth_signing_alg_values_supported: [...SUPPORTED.clientAssertionSigningAlgs],
    code_challenge_methods_supported: [...SUPPORTED.codeChallengeMethods],
    // RFC 9207: every authorization response carries `iss`.
    authorization_response_iss_parameter_supported: true,
  };
}

/** OpenID Connect Discovery 1.0 (`/.well-known/openid-configuration`): the same, plus what only OpenID Connect has. */
export function openidProviderMetadata(options: MetadataOptions): Record<string, unknown> {
  return {
    ...authorizationServerMetadata(options),
    ...endpoints(options.issuer, OIDC_SUPPORTED.endpoints),
    subject_types_supported: [...OIDC_SUPPORTED.subjectTypes],
    id_token_signing_alg_values_supported: [...OIDC_SUPPORTED.idTokenSigningAlgs],
    claims_supported: [...OIDC_SUPPORTED.claims],
    acr_values_supported: [...OIDC_SUPPORTED.acrValues],
    prompt_values_supported: [...PROMPTS],
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    claims_parameter_supported: false,
    // OpenID Connect Back-Channel Logout 1.0 (logout/backchannel/): logout tokens carry `sid`, as id_tokens do.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
  };
}
