import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { ApplicationEntity } from './application.entity.js';
import { ApplicationsService } from './applications.service.js';
import { ClientAssertionVerifier } from './client-assertion.js';
import { SUPPORTED } from '../capabilities.js';
import { OAuthError } from '../oauth.errors.js';
import { addressKey, RateLimits } from '../../rate-limits/rate-limits.service.js';
import { formDecodedHeaderText, utf8Text } from '../../errors/header-text.js';
import { UnstorableTextError } from '../../errors/text-input.js';

/**
 * The rate-limit budget a client's requests to the token, revocation, introspection and device
 * authorization endpoints spend. A confidential client has one, charged after it proved its secret, so
 * no one else can spend it. A public client proves nothing (its id is public), so it has one per caller
 * address: anyone can spend their own share of it, never every installation's.
 */
export function clientBudget(application: ApplicationEntity, ip: string): { budget: 'client'; key: string } {
  return {
    budget: 'client',
    key: application.clientType === 'public' ? `${application.clientId} ${addressKey(ip)}` : application.clientId,
  };
}

export type TokenRequestParams = Record<string, string>;

/**
 * The prefix of every resource server's introspection id (`resources/`): no client id (hex) starts with it,
 * so client authentication refuses such a credential at once.
 */
export const INTROSPECTION_ID_PREFIX = 'rs_';

/** Parameters that may be given more than once (RFC 8707 §2: `resource`); `readResources` reads all their values. */
const REPEATABLE = new Set(['resource']);

/**
 * The body of a token, revocation or introspection request as strings: form-encoded (RFC 6749) or
 * JSON (what many clients send). A parameter given twice is refused (RFC 6749 §3.2), but for
 * `resource` (RFC 8707), whose first value is kept here and every value read by `readResources`.
 */
export function readParams(contentType: string | undefined, body: unknown): TokenRequestParams {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded' && type !== 'application/json') {
    throw new OAuthError('invalid_request', 'Send the parameters as application/x-www-form-urlencoded (or application/json)');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new OAuthError('invalid_request', 'The request body is empty');
  const params: TokenRequestParams = {};
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (Array.isArray(value) && REPEATABLE.has(name)) {
      if (!value.every((v) => typeof v === 'string')) throw new OAuthError('invalid_request', `The ${name} parameter must be a string`);
      params[name] = value[0] as string;
      continue;
    }
    if (Array.isArray(value)) throw new OAuthError('invalid_request', `The ${name} parameter is given more than once`);
    if (typeof value !== 'string') throw new OAuthError('invalid_request', `The ${name} parameter must be a string`);
    params[name] = value;
  }
  return params;
}

/** Every `resource` value of a body `readParams` accepted (none, one, or several: RFC 8707 §2). */
export function readResources(body: unknown): string[] {
  const value = (body as Record<string, unknown>).resource;
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]) as string[];
}

/** Basic credentials far beyond any client id and secret Agora issues, even percent-encoded, are refused unread. */
const MAX_BASIC_CREDENTIALS_LENGTH = 1024;
const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;

/**
 * `Authorization: Basic` client credentials (RFC 7617, RFC 6749 §2.3.1): canonical base64 (padding optional) of UTF-8
 * text, the client id and the secret each form-urlencoded, through the header text boundary. Anything
 * else is a failed client authentication: `invalid_client` (401 with the Basic challenge, §5.2).
 */
export function basicCredentials(authorization: string | undefined): { clientId: string; clientSecret: string } | undefined {
  if (authorization === undefined) return undefined;
  if (authorization.length > MAX_BASIC_CREDENTIALS_LENGTH)
    throw new OAuthError('invalid_client', `HTTP Basic credentials must be at most ${MAX_BASIC_CREDENTIALS_LENGTH} characters`);
  const match = BASIC.exec(authorization);
  if (!match) throw new OAuthError('invalid_client', 'The Authorization header must be HTTP Basic with the client id and secret');
  const encoded = match[1]!;
  const bytes = Buffer.from(encoded, 'base64');
  // Buffer.from ignores what it cannot read (bad padding, stray bits): only the one encoding of the bytes is
  // accepted, with or without its padding (some clients leave it out).
  const canonical = bytes.toString('base64');
  if (encoded !== canonical && encoded !== canonical.replace(/=+$/, ''))
    throw new OAuthError('invalid_client', 'HTTP Basic credentials must be canonical base64');
  try {
    const decoded = utf8Text(bytes, 'HTTP Basic credentials');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError('invalid_client', 'HTTP Basic credentials must be the client id and secret separated by a colon');
    return {
      clientId: formDecodedHeaderText(decoded.slice(0, colon), 'The client id in HTTP Basic', MAX_BASIC_CREDENTIALS_LENGTH),
      clientSecret: formDecodedHeaderText(decoded.slice(colon + 1), 'The client secret in HTTP Basic', MAX_BASIC_CREDENTIALS_LENGTH),
    };
  } catch (err) {
    if (err instanceof UnstorableTextError) throw new OAuthError('invalid_client', err.message);
    throw err;
  }
}

const USE_ASSERTION =
  'This client authenticates with private_key_jwt: send client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer and a client_assertion signed with its key';

/**
 * How a client proves itself (RFC 6749 §2.3): a confidential client with `client_secret_basic` or
 * `client_secret_post`, never both, or with `private_key_jwt` (an assertion signed with its key, RFC
 * 7523: ClientAssertionVerifier), whichever it registered for and never the other; a public client with
 * `none`, its `client_id` in the body alone (RFC 8252 §8.4; PKCE is what binds its code to it).
 */
@Injectable()
export class ClientAuthenticator {
  constructor(
    private readonly applications: ApplicationsService,
    private readonly assertions: ClientAssertionVerifier,
    private readonly rateLimits: RateLimits,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The client, authenticated, and charged 1 request of its budget (clientBudget): token, revocation,
   * introspection and device authorization requests share it, so that none of them is a way around it
   * (and each device authorization is a row until it expires). A caller that fails to authenticate
   * spends nothing of the client's budget.
   */
  async authenticateCharged(req: FastifyRequest, reply: FastifyReply, params: TokenRequestParams): Promise<ApplicationEntity> {
    const endpointUrl = `${this.config.baseUrl}${req.url.split('?')[0]}`;
    const application = await this.authenticate(req.headers.authorization, params, endpointUrl);
    await this.rateLimits.charge(reply, clientBudget(application, req.ip), 1);
    return application;
  }

  /** `endpointUrl`: the endpoint called, which a client assertion's `aud` may name besides the issuer and token endpoint. */
  async authenticate(
    authorization: string | undefined,
    params: TokenRequestParams,
    endpointUrl = `${this.config.baseUrl}${SUPPORTED.endpoints.token_endpoint}`,
  ): Promise<ApplicationEntity> {
    const basic = basicCredentials(authorization);
    if (params.client_assertion !== undefined || params.client_assertion_type !== undefined) {
      if (basic || params.client_secret !== undefined)
        throw new OAuthError('invalid_request', 'Use one client authentication method: a client assertion or a client secret, not both');
      return this.assertedClient(params, endpointUrl);
    }
    if (basic && params.client_secret !== undefined) {
      throw new OAuthError('invalid_request', 'Use one client authentication method: HTTP Basic or client_secret in the body, not both');
    }
    if (basic && params.client_id !== undefined && params.client_id !== basic.clientId) {
      throw new OAuthError('invalid_request', 'client_id in the body differs from the one in the Authorization header');
    }
    if (!basic && params.client_id !== undefined && params.client_secret === undefined) return this.publicClient(params.client_id);
    const credentials =
      basic ??
      (params.client_id !== undefined && params.client_secret !== undefined
        ? { clientId: params.client_id, clientSecret: params.client_secret }
        : undefined);
    if (!credentials) throw new OAuthError('invalid_client', 'Client authentication is required (client_id and client_secret)');
    if (credentials.clientId.startsWith(INTROSPECTION_ID_PREFIX))
      throw new OAuthError('invalid_client', 'A resource server’s credential is for token introspection only');
    const application = await this.applications.authenticate(credentials.clientId, credentials.clientSecret);
    if (application) return application;
    const found = await this.applications.findClient(credentials.clientId);
    if (found?.clientType === 'public')
      throw new OAuthError('invalid_client', 'This is a public client: send its client_id without a client secret');
    if (found?.tokenEndpointAuthMethod === 'private_key_jwt') throw new OAuthError('invalid_client', USE_ASSERTION);
    throw new OAuthError('invalid_client', 'Unknown client or wrong client secret');
  }

  /** `private_key_jwt`: only a client registered for it, and only with an assertion that verifies. */
  private async assertedClient(params: TokenRequestParams, endpointUrl: string): Promise<ApplicationEntity> {
    const clientId = this.assertions.clientIdOf(params);
    const application = await this.applications.findClient(clientId);
    if (!application) throw new OAuthError('invalid_client', 'Unknown client');
    if (application.clientType === 'public')
      throw new OAuthError('invalid_client', 'This is a public client: send its client_id without a client assertion');
    if (application.tokenEndpointAuthMethod !== 'private_key_jwt')
      throw new OAuthError('invalid_client', 'This client authenticates with its client secret, not with a client assertion');
    await this.assertions.verify(application, params.client_assertion!, endpointUrl);
    return application;
  }

  /** `token_endpoint_auth_method=none`: only a client registered as public may identify itself by its id alone. */
  private async publicClient(clientId: string): Promise<ApplicationEntity> {
    const application = await this.applications.findClient(clientId);
    if (application?.clientType === 'public') return application;
    if (application?.tokenEndpointAuthMethod === 'private_key_jwt') throw new OAuthError('invalid_client', USE_ASSERTION);
    if (application) throw new OAuthError('invalid_client', 'This client is confidential: authenticate with its client secret');
    throw new OAuthError('invalid_client', 'Unknown client');
  }
}
