import { parseScopeList } from '../../auth/scopes.js';
import { ACCESS_TOKEN_FORMATS, type ClientType } from './application.entity.js';
import { DEFAULT_SIGNING_ALG, SIGNING_ALGS } from '../keys/signing-algorithms.js';
import type { ApplicationInput } from './applications.service.js';
import { OAuthError } from '../oauth.errors.js';
import { SUPPORTED } from '../capabilities.js';
import { ASSERTION_SIGNING_ALGS } from './client-keys.js';

/** The client authentication methods a registration may ask for, and the client type each makes. */
const AUTH_METHODS: Readonly<Record<string, ClientType>> = {
  none: 'public',
  client_secret_basic: 'confidential',
  client_secret_post: 'confidential',
  private_key_jwt: 'confidential',
};

/** What a client that does not say gets (RFC 7591 §2). */
const DEFAULTS = {
  tokenEndpointAuthMethod: 'client_secret_basic',
  grantTypes: ['authorization_code'],
  responseTypes: ['code'],
  /** Sign-in and the API: the least that makes a useful client; ask for more with `scope`. */
  scope: 'openid api',
  clientName: 'Unnamed application',
} as const;

/** RFC 7591 client metadata as Agora registers it: what it keeps, and what it answers with. */
export interface ClientMetadata {
  clientType: ClientType;
  input: ApplicationInput;
  tokenEndpointAuthMethod: string;
  grantTypes: string[];
  responseTypes: string[];
}

const metadataError = (description: string) => new OAuthError('invalid_client_metadata', description);

function optionalString(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw metadataError(`${name} must be a string`);
  return value;
}

function optionalStrings(body: Record<string, unknown>, name: string, error = metadataError): string[] | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === 'string')) {
    throw error(`${name} must be an array of strings`);
  }
  return value;
}

function optionalBoolean(body: Record<string, unknown>, name: string): boolean | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw metadataError(`${name} must be true or false`);
  return value;
}

/** OpenID Connect Registration §2 `subject_type`; a pairwise client's sector is its redirect URIs' host. */
function subjectType(fields: Record<string, unknown>): 'public' | 'pairwise' {
  if (fields.sector_identifier_uri !== undefined && fields.sector_identifier_uri !== null) {
    throw metadataError(
      "sector_identifier_uri is not supported: a pairwise client's sector is the host of its redirect_uris, which must all share it",
    );
  }
  const value = optionalString(fields, 'subject_type') ?? 'public';
  if (value !== 'public' && value !== 'pairwise') throw metadataError('subject_type must be public or pairwise');
  return value;
}

function onlyFrom(name: string, values: string[], supported: readonly string[]): string[] {
  const unsupported = values.filter((value) => !supported.includes(value));
  if (unsupported.length > 0) throw metadataError(`Unsupported ${name}: ${unsupported.join(', ')} (supported: ${supported.join(', ')})`);
  return [...new Set(values)];
}

function onlyOne(name: string, value: string | undefined, supported: readonly string[]): string | undefined {
  if (value !== undefined && !supported.includes(value))
    throw metadataError(`Unsupported ${name}: ${value} (supported: ${supported.join(', ')})`);
  return value;
}

/**
 * Reads an RFC 7591 registration request: the metadata Agora understands, checked for type and for
 * what this server supports (the profile: `client_uri`, `logo_uri`, and Agora's `client_description`);
 * every other member is ignored, as §2 says. What the dashboard checks
 * (redirect URIs, name, scopes) is checked afterwards by the same code as there.
 */
export function readClientMetadata(body: unknown): ClientMetadata {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw metadataError('The request body must be a JSON object');
  const fields = body as Record<string, unknown>;

  const redirectUris = optionalStrings(fields, 'redirect_uris', (d) => new OAuthError('invalid_redirect_uri', d));
  if (!redirectUris || redirectUris.length === 0) throw new OAuthError('invalid_redirect_uri', 'redirect_uris is required');

  const tokenEndpointAuthMethod = optionalString(fields, 'token_endpoint_auth_method') ?? DEFAULTS.tokenEndpointAuthMethod;
  const clientType = Object.hasOwn(AUTH_METHODS, tokenEndpointAuthMethod) ? AUTH_METHODS[tokenEndpointAuthMethod] : undefined;
  if (!clientType) {
    throw metadataError(
      `Unsupported token_endpoint_auth_method: ${tokenEndpointAuthMethod} (supported: ${Object.keys(AUTH_METHODS).join(', ')})`,
    );
  }
  const grantTypes = onlyFrom(
    'grant_types',
    optionalStrings(fields, 'grant_types') ?? [...DEFAULTS.grantTypes],
    SUPPORTED.registrableGrantTypes,
  );
  const responseTypes = onlyFrom(
    'response_types',
    optionalStrings(fields, 'response_types') ?? [...DEFAULTS.responseTypes],
    SUPPORTED.responseTypes,
  );
  // RFC 7591 §2.1: the code response type goes with the authorization code grant.
  if (responseTypes.includes('code') !== grantTypes.includes('authorization_code')) {
    throw metadataError('response_types "code" and grant_types "authorization_code" go together');
  }
  const jwks = fields.jwks ?? undefined;
  const jwksUri = optionalString(fields, 'jwks_uri');
  const signingAlg = optionalString(fields, 'token_endpoint_auth_signing_alg');
  if (signingAlg !== undefined && !(ASSERTION_SIGNING_ALGS as readonly string[]).includes(signingAlg))
    throw metadataError(`Unsupported token_endpoint_auth_signing_alg: ${signingAlg} (supported: ${ASSERTION_SIGNING_ALGS.join(', ')})`);

  return {
    clientType,
    tokenEndpointAuthMethod,
    grantTypes,
    responseTypes,
    input: {
      name: optionalString(fields, 'client_name') ?? DEFAULTS.clientName,
      redirectUris,
      scopes: parseScopeList(optionalString(fields, 'scope') ?? DEFAULTS.scope),
      postLogoutRedirectUris: optionalStrings(fields, 'post_logout_redirect_uris') ?? [],
      idTokenSignedResponseAlg:
        onlyOne('id_token_signed_response_alg', optionalString(fields, 'id_token_signed_response_alg'), SIGNING_ALGS) ??
        DEFAULT_SIGNING_ALG,
      accessTokenFormat: onlyOne('access_token_format', optionalString(fields, 'access_token_format'), ACCESS_TOKEN_FORMATS) ?? 'opaque',
      // Keys matter to private_key_jwt alone; a client of another method that sends some (for request
      // objects, say) has them ignored, like any metadata Agora does not use.
      authentication:
        tokenEndpointAuthMethod === 'private_key_jwt' ? { tokenEndpointAuthMethod, jwks, jwksUri } : { tokenEndpointAuthMethod },
      backchannelLogoutUri: optionalString(fields, 'backchannel_logout_uri') ?? null,
      backchannelLogoutSessionRequired: optionalBoolean(fields, 'backchannel_logout_session_required') ?? false,
      // A field left out is its default (none), at registration and in a replacement (RFC 7592 §2.2) alike.
      clientUri: optionalString(fields, 'client_uri') ?? null,
      logoUri: optionalString(fields, 'logo_uri') ?? null,
      // RFC 7591 has no member for it: Agora's own, named like the others.
      description: optionalString(fields, 'client_description') ?? null,
      subjectType: subjectType(fields),
    },
  };
}
