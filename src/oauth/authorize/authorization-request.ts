import { Injectable, OnModuleInit } from '@nestjs/common';
import { isScope, parseScopeList } from '../../auth/scopes.js';
import { Acr, ACR_VALUES } from '../../auth/authentication-methods.js';
import { type ReturnDestination, ReturnOrigins } from '../../sessions/return-origins.js';
import { showsUnverifiedNotice } from '../interaction/interaction-rules.js';
import { ApplicationEntity } from '../clients/application.entity.js';
import { ApplicationsService } from '../clients/applications.service.js';
import { matchesRegisteredRedirectUri } from '../clients/application-validation.js';
import { AuthorizationPageError, OAuthError } from '../oauth.errors.js';
import { PkceService } from '../pkce.service.js';
import { PROMPTS } from '../capabilities.js';
import { ResourceIndicators } from '../resources/resource-indicators.js';
import type { ResourceServer } from '../resources/resource-server.model.js';

/** A checked authorization request (RFC 6749 §4.1.1 with RFC 7636 PKCE). */
export interface AuthorizationRequest {
  application: ApplicationEntity;
  redirectUri: string;
  scopes: string[];
  codeChallenge: string;
  state?: string;
  nonce?: string;
  /** OpenID Connect `prompt` (none, login, consent, select_account); empty when not sent. */
  prompt: ReadonlySet<Prompt>;
  /** OpenID Connect `max_age`: the longest time, in seconds, since the user last signed in. */
  maxAge?: number;
  /**
   * The class of sign-in the client asked for with `acr_values` (OpenID Connect Core §3.1.2.1): the
   * weakest of the values Agora knows, as any of them would do; undefined when none is known. Agora
   * treats it as required (docs/oauth.md, "acr_values").
   */
  acr?: Acr;
  /** How the response reaches the client: a redirect with a query (the default) or a form posted to it (form_post). */
  responseMode: ResponseMode;
  /**
   * RFC 8707 `resource` values (empty when none was sent): BASE_URL for Agora's API, whatever address
   * under it was sent, and registered resource servers' identifiers.
   */
  resources: string[];
  /** The registered resource servers among `resources`, which the consent page names. */
  resourceServers: ResourceServer[];
}

/** OAuth 2.0 Multiple Response Type Encoding Practices §2.1 (`query`) and OAuth 2.0 Form Post Response Mode. */
export type ResponseMode = 'query' | 'form_post';
const RESPONSE_MODES: readonly ResponseMode[] = ['query', 'form_post'];

export type Prompt = (typeof PROMPTS)[number];
const isPrompt = (value: string): value is Prompt => (PROMPTS as readonly string[]).includes(value);

/** An error to send back to the client's redirect URI (RFC 6749 §4.1.2.1). */
export class AuthorizationRedirectError extends OAuthError {
  constructor(
    error: OAuthError,
    readonly application: ApplicationEntity,
    readonly redirectUri: string,
    readonly state: string | undefined,
    readonly responseMode: ResponseMode,
  ) {
    super(error.code, error.description);
  }
}

const PARAMETERS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'nonce',
  'prompt',
  'max_age',
  'acr_values',
  'response_mode',
  'login_hint',
];
const MAX_STATE_OR_NONCE = 1024;

function single(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  return values.length === 1 ? values[0] : undefined;
}

/**
 * The checks of the authorization endpoint, in the contract's order: first those whose failure must
 * not redirect (client, redirect URI: an error page), then those reported to the client by redirect.
 */
@Injectable()
export class AuthorizationRequestValidator implements OnModuleInit {
  constructor(
    private readonly applications: ApplicationsService,
    private readonly pkce: PkceService,
    private readonly returnOrigins: ReturnOrigins,
    private readonly resourceIndicators: ResourceIndicators,
  ) {}

  /** The sign-in pages allow the client's origin as a form action (ReturnOrigins, src/sessions/). */
  onModuleInit(): void {
    this.returnOrigins.accept(this);
  }

  /**
   * For a page whose form may end, through redirects, at a client (sign-in or sign-up on the way to
   * `/oauth/authorize`): the origin of that request's registered redirect URI, which the page's CSP
   * form-action must allow (Chromium applies form-action to the redirects after a submission), and the
   * application's name ("Sign in to continue to …"). Only a valid request counts, so the page never allows
   * an origin no application registered. On the way to the device flow's page, only that: the code is
   * looked up when the user submits it, never from an address.
   */
  async destinationOf(returnTo: string): Promise<ReturnDestination> {
    if (returnTo === '/oauth/device' || returnTo.startsWith('/oauth/device?')) return { device: true };
    if (!returnTo.startsWith('/oauth/authorize?')) return {};
    try {
      const request = await this.validate(new URLSearchParams(returnTo.slice(returnTo.indexOf('?') + 1)));
      return {
        origin: formActionSource(request.redirectUri),
        application: { name: request.application.name, unverified: showsUnverifiedNotice(request.application) },
      };
    } catch {
      return {};
    }
  }

  async validate(params: URLSearchParams): Promise<AuthorizationRequest> {
    const application = await this.checkClient(params);
    const redirectUri = this.checkRedirectUri(params, application);
    const stateValues = params.getAll('state');
    const state = stateValues.length === 1 ? stateValues[0] : undefined;
    // An error is delivered the way the client asked, when it asked for a mode Agora knows, once.
    const modeValues = params.getAll('response_mode');
    const responseMode: ResponseMode = modeValues.length === 1 && modeValues[0] === 'form_post' ? 'form_post' : 'query';
    try {
      this.checkRequestObjects(params);
      this.checkNoRepeatedParameters(params);
      this.checkResponseMode(params);
      this.checkResponseType(params);
      const codeChallenge = this.checkPkce(params);
      const scopes = this.checkScopes(params, application);
      const nonce = this.checkOptional(params, 'nonce');
      this.checkOptional(params, 'state');
      const prompt = this.checkPrompt(params);
      const maxAge = this.checkMaxAge(params);
      const acr = requestedAcr(params.get('acr_values'));
      const { resources, servers: resourceServers } = await this.resourceIndicators.resolve(params.getAll('resource'));
      return {
        application,
        redirectUri,
        scopes,
        codeChallenge,
        state,
        nonce,
        prompt,
        maxAge,
        acr,
        responseMode,
        resources,
        resourceServers,
      };
    } catch (err) {
      if (err instanceof OAuthError) throw new AuthorizationRedirectError(err, application, redirectUri, state, responseMode);
      throw err;
    }
  }

  private async checkClient(params: URLSearchParams): Promise<ApplicationEntity> {
    const clientId = single(params, 'client_id');
    if (!clientId) throw new AuthorizationPageError('The request has no client_id, or more than one.');
    const application = await this.applications.findByClientId(clientId);
    if (!application) throw new AuthorizationPageError('No application is registered with this client_id.');
    return application;
  }

  private checkRedirectUri(params: URLSearchParams, application: ApplicationEntity): string {
    const redirectUri = single(params, 'redirect_uri');
    if (!redirectUri) throw new AuthorizationPageError('The request has no redirect_uri, or more than one.');
    if (!matchesRegisteredRedirectUri(redirectUri, application.redirectUris, application.clientType)) {
      throw new AuthorizationPageError('The redirect_uri is not registered for this application.');
    }
    return redirectUri;
  }

  /**
   * Request objects (OpenID Connect Core §6) are not supported, and discovery says so
   * (`request_parameter_supported: false`): a request that sends one is refused rather than served
   * without the parameters it may carry (§6.1, §6.2 name the error codes).
   */
  private checkRequestObjects(params: URLSearchParams): void {
    if (params.has('request')) throw new OAuthError('request_not_supported', 'Request objects (the request parameter) are not supported');
    if (params.has('request_uri'))
      throw new OAuthError('request_uri_not_supported', 'Request objects by reference (the request_uri parameter) are not supported');
  }

  private checkResponseMode(params: URLSearchParams): void {
    const mode = params.get('response_mode');
    if (mode !== null && !(RESPONSE_MODES as readonly string[]).includes(mode)) {
      throw new OAuthError('invalid_request', `response_mode must be one of: ${RESPONSE_MODES.join(', ')}`);
    }
  }

  private checkNoRepeatedParameters(params: URLSearchParams): void {
    const repeated = PARAMETERS.find((name) => params.getAll(name).length > 1);
    if (repeated) throw new OAuthError('invalid_request', `The ${repeated} parameter is given more than once`);
  }

  private checkResponseType(params: URLSearchParams): void {
    const responseType = params.get('response_type');
    if (!responseType) throw new OAuthError('invalid_request', 'response_type is required');
    if (responseType !== 'code') throw new OAuthError('unsupported_response_type', 'Only response_type=code is supported');
  }

  private checkPkce(params: URLSearchParams): string {
    const method = params.get('code_challenge_method');
    const challenge = params.get('code_challenge');
    if (!challenge || !method)
      throw new OAuthError('invalid_request', 'PKCE is required: send code_challenge and code_challenge_method=S256');
    if (method !== 'S256') throw new OAuthError('invalid_request', 'code_challenge_method must be S256');
    if (!this.pkce.isValidChallenge(challenge)) {
      throw new OAuthError('invalid_request', 'code_challenge must be the 43-character base64url SHA-256 of the code verifier');
    }
    return challenge;
  }

  private checkScopes(params: URLSearchParams, application: ApplicationEntity): string[] {
    return checkRequestedScopes(params.get('scope') ?? undefined, application);
  }

  private checkPrompt(params: URLSearchParams): ReadonlySet<Prompt> {
    const values = (params.get('prompt') ?? '').split(' ').filter(Boolean);
    const unknown = values.filter((v) => !isPrompt(v));
    if (unknown.length) throw new OAuthError('invalid_request', `Unknown prompt value: ${unknown.join(' ')}`);
    const prompt = new Set(values as Prompt[]);
    if (prompt.has('none') && prompt.size > 1) throw new OAuthError('invalid_request', 'prompt=none cannot be combined with other values');
    return prompt;
  }

  private checkMaxAge(params: URLSearchParams): number | undefined {
    const value = params.get('max_age');
    if (value === null) return undefined;
    if (!/^\d{1,10}$/.test(value)) throw new OAuthError('invalid_request', 'max_age must be a whole number of seconds');
    return Number(value);
  }

  private checkOptional(params: URLSearchParams, name: 'state' | 'nonce'): string | undefined {
    const value = params.get(name) ?? undefined;
    if (value !== undefined && value.length > MAX_STATE_OR_NONCE)
      throw new OAuthError('invalid_request', `${name} is longer than ${MAX_STATE_OR_NONCE} characters`);
    return value;
  }
}

/**
 * `acr_values`: space-separated, in order of preference. Values Agora does not know are ignored (the
 * request is voluntary, OpenID Connect Core §5.5.1.1); of the known ones, the weakest, since a sign-in
 * that reaches it satisfies the client (`phr` satisfies `aal2` too).
 */
export function requestedAcr(value: string | null): Acr | undefined {
  const known = new Set((value ?? '').split(' ').filter((v): v is Acr => (ACR_VALUES as readonly string[]).includes(v)));
  return ACR_VALUES.find((acr) => known.has(acr));
}

/**
 * The CSP source that lets a form's redirect reach this redirect URI: its origin, or for a native
 * app's private-use scheme (which has no origin) the scheme itself, e.g. `com.example.app:`.
 */
export function formActionSource(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
}

/**
 * The scopes a client asks for, at the authorization and device authorization endpoints alike: at
 * least one, each known, each one the application may request (`invalid_scope` otherwise).
 */
export function checkRequestedScopes(scope: string | undefined, application: ApplicationEntity): string[] {
  const scopes = parseScopeList(scope ?? '');
  if (scopes.length === 0) throw new OAuthError('invalid_scope', 'scope is required, for example "openid api"');
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) throw new OAuthError('invalid_scope', `Unknown scope: ${unknown.join(' ')}`);
  const notAllowed = scopes.filter((s) => !application.scopes.includes(s));
  if (notAllowed.length) throw new OAuthError('invalid_scope', `The application may not request: ${notAllowed.join(' ')}`);
  return scopes;
}

/** Where to send the browser with an authorization response (RFC 6749 §4.1.2, RFC 9207 `iss`). */
export function redirectLocation(redirectUri: string, params: Record<string, string | undefined>, issuer: string): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  url.searchParams.set('iss', issuer);
  return url.toString();
}
