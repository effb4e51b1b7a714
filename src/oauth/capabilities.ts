import { ACR_VALUES } from '../auth/authentication-methods.js';
import { SIGNING_ALGS } from './keys/signing-algorithms.js';

/** The `prompt` values of OpenID Connect Core §3.1.2.1, all supported. */
export const PROMPTS = ['none', 'login', 'consent', 'select_account'] as const;

/**
 * What this authorization server supports, in one place: both discovery documents (RFC 8414 and
 * OpenID Connect Discovery) are built from it, so they never disagree. A feature that adds an
 * endpoint or a grant type adds it here, and both documents list it.
 */
export const SUPPORTED = {
  /** Endpoints, by their metadata name, as paths under the issuer (BASE_URL). */
  endpoints: {
    authorization_endpoint: '/oauth/authorize',
    token_endpoint: '/oauth/token',
    jwks_uri: '/oauth/discovery/keys',
    revocation_endpoint: '/oauth/revoke',
    introspection_endpoint: '/oauth/introspect',
    device_authorization_endpoint: '/oauth/device_authorization',
  } as Record<string, string>,
  /** RFC 7591: listed only while OAUTH_DYNAMIC_REGISTRATION=true. */
  registrationEndpoint: '/oauth/register',
  grantTypes: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code', 'client_credentials'] as string[],
  /** What a client may register for (RFC 7591): every grant but client_credentials, which is for service accounts, made by an organizer's owner. */
  registrableGrantTypes: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'] as string[],
  responseTypes: ['code'],
  // form_post: OAuth 2.0 Form Post Response Mode (authorize/form-post.page.ts).
  responseModes: ['query', 'form_post'],
  codeChallengeMethods: ['S256'],
  // none: public clients, which identify themselves by client_id and prove the code with PKCE.
  // private_key_jwt: RFC 7523 assertions signed with a key of the client's JWKS (src/oauth/clients/client-assertion.ts).
  clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
  /** What a client assertion may be signed with: asymmetric algorithms only, never `none` or HS*. */
  clientAssertionSigningAlgs: ['RS256', 'PS256', 'ES256', 'EdDSA'],
} as const;

/** OpenID Connect only: the UserInfo endpoint, ID tokens and their claims. */
export const OIDC_SUPPORTED = {
  endpoints: { userinfo_endpoint: '/oauth/userinfo', end_session_endpoint: '/oauth/logout' } as Record<string, string>,
  // pairwise: OpenID Connect Core §8.1, for clients that register subject_type=pairwise (subjects/).
  subjectTypes: ['public', 'pairwise'],
  /** Each client chooses one (`id_token_signed_response_alg`, RS256 by default); its JWT access tokens use it too. */
  idTokenSigningAlgs: SIGNING_ALGS,
  claims: [
    'iss',
    'sub',
    'aud',
    'exp',
    'iat',
    'auth_time',
    'nonce',
    'amr',
    'acr',
    'sid',
    'name',
    'preferred_username',
    'email',
    'email_verified',
  ],
  /** `acr_values` a client may ask for (docs/account-security.md, "For client developers: acr and amr"). */
  acrValues: ACR_VALUES,
} as const;
