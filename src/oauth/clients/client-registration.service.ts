import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../../clock/clock.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { failuresOf, DomainError } from '../../errors/domain-error.js';
import { ApplicationError } from './applications.errors.js';
import { ApplicationsService, NEVER_USED } from './applications.service.js';
import type { Application } from './application.model.js';
import { readClientMetadata } from './client-metadata.js';
import { OAuthError } from '../oauth.errors.js';
import { SUPPORTED } from '../capabilities.js';

/** Held while a registration counts the unclaimed applications and inserts its own (docs/operations.md, the locks). */
const REGISTRATION_LOCK = 727274003;
/** The soonest a refused registration is told to try again: never a retry storm, whatever the settings. */
export const MIN_RETRY_AFTER_SECONDS = 60;

/**
 * The RFC 7591 §3.2.1 response: the client's credentials and the metadata as registered; with RFC 7592
 * §3, the registration access token (in the registration response only: it is kept hashed) and the
 * address where the client reads, updates and deletes its registration.
 */
export interface ClientInformation {
  client_id: string;
  client_secret?: string;
  client_id_issued_at: number;
  client_secret_expires_at?: number;
  registration_access_token?: string;
  registration_client_uri: string;
  client_name: string;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  backchannel_logout_uri?: string;
  backchannel_logout_session_required?: boolean;
  client_uri?: string;
  logo_uri?: string;
  client_description?: string;
  subject_type: 'public' | 'pairwise';
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: string;
  jwks?: unknown;
  jwks_uri?: string;
  scope: string;
  /** OpenID Connect Registration §2: how its id_tokens (and JWT access tokens) are signed. */
  id_token_signed_response_alg: string;
  /** Agora's extension: `opaque` or `jwt` (RFC 9068) access tokens. */
  access_token_format: string;
}

/** Where a client manages its registration (RFC 7592 §3): the registration endpoint and its client id. */
export function registrationClientUri(baseUrl: string, clientId: string): string {
  return `${baseUrl}${SUPPORTED.registrationEndpoint}/${encodeURIComponent(clientId)}`;
}

/**
 * The client information of a registered application. Grant and response types are those asked at
 * registration when known; afterwards (RFC 7592 reads), those Agora lets every client use.
 */
export function clientInformation(
  baseUrl: string,
  application: Application,
  extra: { clientSecret?: string; registrationAccessToken?: string; grantTypes?: string[]; responseTypes?: string[] } = {},
): ClientInformation {
  return {
    client_id: application.clientId,
    ...(extra.clientSecret !== undefined && { client_secret: extra.clientSecret, client_secret_expires_at: 0 }),
    client_id_issued_at: Math.floor(application.createdAt.getTime() / 1000),
    ...(extra.registrationAccessToken !== undefined && { registration_access_token: extra.registrationAccessToken }),
    registration_client_uri: registrationClientUri(baseUrl, application.clientId),
    client_name: application.name,
    redirect_uris: application.redirectUris,
    post_logout_redirect_uris: application.postLogoutRedirectUris,
    ...(application.backchannelLogoutUri !== null && {
      backchannel_logout_uri: application.backchannelLogoutUri,
      backchannel_logout_session_required: application.backchannelLogoutSessionRequired,
    }),
    subject_type: application.subjectType,
    ...(application.clientUri !== null && { client_uri: application.clientUri }),
    ...(application.logoUri !== null && { logo_uri: application.logoUri }),
    ...(application.description !== null && { client_description: application.description }),
    grant_types: extra.grantTypes ?? [...SUPPORTED.registrableGrantTypes],
    response_types: extra.responseTypes ?? [...SUPPORTED.responseTypes],
    token_endpoint_auth_method: application.tokenEndpointAuthMethod,
    ...(application.jwks && { jwks: application.jwks }),
    ...(application.jwksUri && { jwks_uri: application.jwksUri }),
    scope: application.scopes.join(' '),
    id_token_signed_response_alg: application.idTokenSignedResponseAlg,
    access_token_format: application.accessTokenFormat,
  };
}

/**
 * Dynamic client registration (RFC 7591): a public (`none`) or confidential application, checked like
 * one registered in the dashboard, owned by nobody until an operator gives it to a user.
 *
 * Unclaimed applications are capped so that an open endpoint cannot fill the database, and so that no
 * single actor can close it for everyone: at most OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK of them from
 * one network (IPv4 /24, IPv6 /48; past it 429), and OAUTH_UNCLAIMED_APPLICATIONS_MAX in all (past it
 * 503), both with `Retry-After`: when the oldest of them nobody used is deleted by housekeeping
 * (OAUTH_UNCLAIMED_APPLICATION_TTL_SECONDS after it registered). Counted and inserted under one advisory
 * lock, so concurrent registrations never overshoot.
 */
@Injectable()
export class ClientRegistrationService {
  constructor(
    private readonly applications: ApplicationsService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Registers the application `body` describes, for a caller from `network` (`networkKey`). */
  async register(body: unknown, network: string): Promise<ClientInformation> {
    const metadata = readClientMetadata(body);
    let registered;
    try {
      registered = await this.applications.create(null, metadata.input, metadata.clientType, {
        registeredFrom: network,
        admit: (manager) => this.admit(manager, network),
      });
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'invalid') throw registrationError(err);
      throw err;
    }
    const { application, clientSecret, registrationAccessToken } = registered;
    return clientInformation(this.config.baseUrl, application, {
      clientSecret,
      registrationAccessToken,
      grantTypes: metadata.grantTypes,
      responseTypes: metadata.responseTypes,
    });
  }

  /** Refuses a registration past either cap, saying when trying again can work. */
  private async admit(manager: EntityManager, network: string): Promise<void> {
    const { unclaimedApplicationsMax: max, unclaimedApplicationsPerNetwork: perNetwork } = this.config.oauth;
    await manager.query('SELECT pg_advisory_xact_lock($1)', [REGISTRATION_LOCK]);
    const [counts] = (await manager.query(COUNT_UNCLAIMED, [network])) as [{ total: number; from_network: number }];
    if (counts.from_network >= perNetwork) {
      throw new OAuthError(
        'too_many_requests',
        `Too many applications registered from your network wait to be claimed (${perNetwork}); try again when one is claimed or deleted`,
        await this.retryAfterSeconds(manager, network),
      );
    }
    if (counts.total >= max) {
      throw new OAuthError(
        'temporarily_unavailable',
        'Registration is closed for now: too many applications are waiting to be claimed',
        await this.retryAfterSeconds(manager, null),
      );
    }
  }

  /**
   * Seconds until housekeeping may delete the oldest unclaimed application nobody used (from `network`,
   * or from anywhere): the earliest that room can be made without an operator. When all of them are in
   * use, only an operator makes room (claiming or deleting one): try again in one TTL. Never sooner than
   * a quarter of HOUSEKEEPING_INTERVAL_SECONDS (how often instances look whether housekeeping is due) nor
   * MIN_RETRY_AFTER_SECONDS: once the oldest is overdue, housekeeping may still be that far away, and
   * every refused client told "1 second" would come back at once, again and again.
   */
  private async retryAfterSeconds(manager: EntityManager, network: string | null): Promise<number> {
    const ttlMs = this.config.oauth.unclaimedApplicationTtlMs;
    const [row] = (await manager.query(OLDEST_NEVER_USED, [network])) as [{ oldest: Date | null }];
    const dueMs = row.oldest ? new Date(row.oldest).getTime() + ttlMs - this.clock.now().getTime() : ttlMs;
    const floorMs = Math.max(MIN_RETRY_AFTER_SECONDS * 1000, this.config.housekeepingIntervalMs / 4);
    return Math.ceil(Math.max(dueMs, floorMs) / 1000);
  }
}

const COUNT_UNCLAIMED = `
  SELECT count(*)::int AS total, (count(*) FILTER (WHERE registered_from = $1))::int AS from_network
    FROM oauth_applications WHERE owner_id IS NULL AND organizer_id IS NULL`;

/** $1: a network, or null for every one. */
const OLDEST_NEVER_USED = `
  SELECT min(a.created_at) AS oldest FROM oauth_applications a
   WHERE a.owner_id IS NULL AND a.organizer_id IS NULL AND ($1::text IS NULL OR a.registered_from = $1) AND ${NEVER_USED}`;

/** The dashboard's validation errors in RFC 7591 §3.2.2 words, naming the metadata field. */
export function registrationError(error: DomainError): OAuthError {
  const failures = failuresOf(error);
  const badRedirect = failures.some((f) => f.field === 'redirectUris');
  const described = failures
    .map((f) => {
      const name = FIELD_NAMES[f.field ?? ''] ?? f.field ?? 'metadata';
      // The position in the array as sent, counted from 0: redirect_uris[2].
      const at = f instanceof ApplicationError && f.index !== undefined ? `[${f.index}]` : '';
      return `${name}${at}: ${f.message}`;
    })
    .join('; ');
  return new OAuthError(badRedirect ? 'invalid_redirect_uri' : 'invalid_client_metadata', described);
}

const FIELD_NAMES: Record<string, string> = {
  name: 'client_name',
  redirectUris: 'redirect_uris',
  postLogoutRedirectUris: 'post_logout_redirect_uris',
  backchannelLogoutUri: 'backchannel_logout_uri',
  subjectType: 'subject_type',
  scopes: 'scope',
  idTokenSignedResponseAlg: 'id_token_signed_response_alg',
  accessTokenFormat: 'access_token_format',
  tokenEndpointAuthMethod: 'token_endpoint_auth_method',
  jwks: 'jwks',
  jwksUri: 'jwks_uri',
  clientUri: 'client_uri',
  logoUri: 'logo_uri',
  description: 'client_description',
};
