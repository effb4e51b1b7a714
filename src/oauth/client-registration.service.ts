import { Injectable } from '@nestjs/common';
import { failuresOf, DomainError } from '../errors/domain-error.js';
import { ApplicationsService } from './applications.service.js';
import { readClientMetadata } from './client-metadata.js';
import { OAuthError } from './oauth.errors.js';

/**
 * The most applications registered dynamically and not yet claimed: past it, registration waits for
 * an operator to claim or delete some (`apps:list`, `apps:claim`), or for housekeeping to delete those
 * never used within OAUTH_UNCLAIMED_APPLICATION_TTL_SECONDS of registering; so an open endpoint cannot
 * fill the database, and registrations nobody uses do not keep it closed.
 */
export const MAX_UNCLAIMED_APPLICATIONS = 1000;

/** The RFC 7591 §3.2.1 response: the client's credentials and the metadata as registered. */
export interface ClientInformation {
  client_id: string;
  client_secret?: string;
  client_id_issued_at: number;
  client_secret_expires_at?: number;
  client_name: string;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: string;
  scope: string;
}

/**
 * Dynamic client registration (RFC 7591): a public (`none`) or confidential application, checked like
 * one registered in the dashboard, owned by nobody until an operator gives it to a user.
 */
@Injectable()
export class ClientRegistrationService {
  constructor(private readonly applications: ApplicationsService) {}

  async register(body: unknown): Promise<ClientInformation> {
    const metadata = readClientMetadata(body);
    if ((await this.applications.countUnclaimed()) >= MAX_UNCLAIMED_APPLICATIONS) {
      throw new OAuthError('temporarily_unavailable', 'Registration is closed for now: too many applications are waiting to be claimed');
    }
    let registered;
    try {
      registered = await this.applications.create(null, metadata.input, metadata.clientType);
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'invalid') throw registrationError(err);
      throw err;
    }
    const { application, clientSecret } = registered;
    return {
      client_id: application.clientId,
      ...(clientSecret !== undefined && { client_secret: clientSecret, client_secret_expires_at: 0 }),
      client_id_issued_at: Math.floor(application.createdAt.getTime() / 1000),
      client_name: application.name,
      redirect_uris: application.redirectUris,
      post_logout_redirect_uris: application.postLogoutRedirectUris,
      grant_types: metadata.grantTypes,
      response_types: metadata.responseTypes,
      token_endpoint_auth_method: metadata.tokenEndpointAuthMethod,
      scope: application.scopes.join(' '),
    };
  }
}

/** The dashboard's validation errors in RFC 7591 §3.2.2 words, naming the metadata field. */
function registrationError(error: DomainError): OAuthError {
  const failures = failuresOf(error);
  const badRedirect = failures.some((f) => f.field === 'redirectUris');
  const described = failures.map((f) => `${FIELD_NAMES[f.field ?? ''] ?? f.field ?? 'metadata'}: ${f.message}`).join('; ');
  return new OAuthError(badRedirect ? 'invalid_redirect_uri' : 'invalid_client_metadata', described);
}

const FIELD_NAMES: Record<string, string> = {
  name: 'client_name',
  redirectUris: 'redirect_uris',
  postLogoutRedirectUris: 'post_logout_redirect_uris',
  scopes: 'scope',
};
