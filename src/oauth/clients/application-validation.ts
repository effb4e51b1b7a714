import { checkAll, InvalidInput } from '../../errors/domain-error.js';
import { isScope, type ScopeName } from '../../auth/scopes.js';
import { ApplicationError } from './applications.errors.js';
import { ACCESS_TOKEN_FORMATS, type AccessTokenFormat, type ClientType, type SubjectType } from './application.entity.js';
import { DEFAULT_SIGNING_ALG, isSigningAlg, SIGNING_ALGS, type SigningAlg } from '../keys/signing-algorithms.js';
import { sectorsOf } from '../subjects/subjects.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Loopback addresses whose port is not compared (RFC 8252 §7.3); `localhost` is not one of them (§8.3). */
const LOOPBACK_IP = new Set(['127.0.0.1', '[::1]']);
/** A private-use URI scheme in reverse domain name form (RFC 8252 §7.1), e.g. `com.example.app`. */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+:$/;

/**
 * A redirect URI must be absolute, without a fragment (RFC 6749 §3.1.2), and https unless it points
 * at this machine. Public clients (native apps, RFC 8252) may also use a private-use scheme in reverse
 * domain name form. Kept exactly as given: authorization requests must match it character for
 * character (except the port of a public client's loopback IP address, RFC 8252 §7.3).
 */
export function validateRedirectUri(value: string, clientType: ClientType = 'confidential', field = 'redirectUris'): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ApplicationError('INVALID_REDIRECT_URI', `"${value}" is not an absolute URL`, field);
  }
  if (url.hash || value.includes('#'))
    throw new ApplicationError('INVALID_REDIRECT_URI', 'Redirect URIs must not contain a fragment (#)', field);
  if (url.username || url.password) throw new ApplicationError('INVALID_REDIRECT_URI', 'Redirect URIs must not contain credentials', field);
  const localHttp = url.protocol === 'http:' && LOOPBACK.has(url.hostname);
  if (url.protocol === 'https:' || localHttp) return value;
  if (clientType === 'public' && PRIVATE_USE_SCHEME.test(url.protocol)) {
    if (url.host) throw new ApplicationError('INVALID_REDIRECT_URI', `Write a private-use URI with one slash: ${url.protocol}/path`, field);
    return value;
  }
  throw new ApplicationError(
    'INVALID_REDIRECT_URI',
    clientType === 'public'
      ? 'Redirect URIs must use https, http on a loopback address (127.0.0.1, [::1] or localhost), or a private-use scheme in reverse domain form such as com.example.app:/callback'
      : 'Redirect URIs must use https (http is allowed only for localhost)',
    field,
  );
}

/**
 * Whether `requested` is one of `registered`: exactly, or (public clients only) as an http loopback IP
 * address URI that differs in nothing but its port, since a native app gets its port from the system
 * at run time (RFC 8252 §7.3).
 */
export function matchesRegisteredRedirectUri(requested: string, registered: readonly string[], clientType: ClientType): boolean {
  if (registered.includes(requested)) return true;
  if (clientType !== 'public' || !requested.startsWith('http://')) return false;
  const withoutPort = loopbackWithoutPort(requested);
  return withoutPort !== undefined && registered.some((uri) => loopbackWithoutPort(uri) === withoutPort);
}

function loopbackWithoutPort(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' || !LOOPBACK_IP.has(url.hostname) || url.username || url.password || url.hash) return undefined;
  // Compare the rest as written, so that nothing but the port may differ.
  const authority = `http://${url.host}`;
  if (!value.startsWith(authority)) return undefined;
  return `http://${url.hostname}${value.slice(authority.length)}`;
}

/**
 * A list of URIs as given (a form's lines, blank ones included, or a JSON array): blanks skipped,
 * duplicates kept once. A bad URI's error carries its position in the list as given (`index`), so the
 * form can say "Line 3" and dynamic registration `redirect_uris[2]`; every bad one is reported.
 */
function checkRedirectUris(values: string[] | undefined, clientType: ClientType, field: string, min: number): string[] {
  const given = values ?? [];
  const uris = [...new Set(given.map((u) => u.trim()).filter(Boolean))];
  if (uris.length < min || uris.length > 10) {
    throw new ApplicationError('INVALID_REDIRECT_URI', min ? 'Give between 1 and 10 redirect URIs' : 'Give at most 10 URIs', field);
  }
  const failures: ApplicationError[] = [];
  given.forEach((value, index) => {
    const uri = value.trim();
    if (!uri) return;
    try {
      validateRedirectUri(uri, clientType, field);
    } catch (err) {
      if (!(err instanceof ApplicationError)) throw err;
      failures.push(new ApplicationError('INVALID_REDIRECT_URI', err.message, field, index));
    }
  });
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new InvalidInput(failures);
  return uris;
}

/**
 * A back-channel logout URI (OpenID Connect Back-Channel Logout 1.0 §2.2): absolute, no fragment,
 * https unless it points at this machine (as redirect URIs). Whether its address may be reached is
 * decided when a logout token is posted (private addresses refused, as for webhooks).
 */
export function validateBackchannelLogoutUri(value: string | null | undefined, field = 'backchannelLogoutUri'): string | null {
  const uri = value?.trim();
  if (!uri) return null;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new ApplicationError('INVALID_REDIRECT_URI', `"${uri}" is not an absolute URL`, field);
  }
  if (url.hash || uri.includes('#'))
    throw new ApplicationError('INVALID_REDIRECT_URI', 'The back-channel logout URI must not contain a fragment (#)', field);
  if (url.username || url.password)
    throw new ApplicationError('INVALID_REDIRECT_URI', 'The back-channel logout URI must not contain credentials', field);
  if (uri.length > 2000)
    throw new ApplicationError('INVALID_REDIRECT_URI', 'The back-channel logout URI is longer than 2000 characters', field);
  if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname))) return uri;
  throw new ApplicationError(
    'INVALID_REDIRECT_URI',
    'The back-channel logout URI must use https (http is allowed only for localhost)',
    field,
  );
}

/** The longest homepage or logo address, and description, an application may have. */
export const MAX_PROFILE_LENGTH = 500;
const LOOPBACK_HTTP = (url: URL) => url.protocol === 'http:' && LOOPBACK.has(url.hostname);

/**
 * An optional web address shown to users: the homepage (https, or http on this machine for development)
 * or the logo (https only: the consent page loads it). Stored as the URL parser writes it, so no tab or
 * newline survives; never `javascript:`, `data:` or credentials.
 */
function checkWebAddress(
  value: string | undefined,
  o: { field: string; label: string; code: 'INVALID_CLIENT_URI' | 'INVALID_LOGO_URI'; localHttp: boolean },
): string | null {
  const given = (value ?? '').trim();
  if (!given) return null;
  if (given.length > MAX_PROFILE_LENGTH) {
    throw new ApplicationError(o.code, `${o.label} must be at most ${MAX_PROFILE_LENGTH} characters`, o.field);
  }
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new ApplicationError(o.code, `${o.label} must be an absolute address starting with https://`, o.field);
  }
  if (url.protocol !== 'https:' && !(o.localHttp && LOOPBACK_HTTP(url))) {
    throw new ApplicationError(
      o.code,
      o.localHttp ? `${o.label} must use https (http only for localhost)` : `${o.label} must use https`,
      o.field,
    );
  }
  if (url.username || url.password) throw new ApplicationError(o.code, `${o.label} must not contain credentials`, o.field);
  if (url.href.length > MAX_PROFILE_LENGTH) {
    throw new ApplicationError(o.code, `${o.label} must be at most ${MAX_PROFILE_LENGTH} characters`, o.field);
  }
  return url.href;
}

function checkDescription(value: string | undefined): string | null {
  const description = (value ?? '').replace(/\r\n?/g, '\n').trim();
  if (!description) return null;
  if (description.length > MAX_PROFILE_LENGTH) {
    throw new ApplicationError('INVALID_DESCRIPTION', `Description must be at most ${MAX_PROFILE_LENGTH} characters`, 'description');
  }
  return description;
}

export interface ValidApplicationInput {
  name: string;
  redirectUris: string[];
  scopes: string[];
  postLogoutRedirectUris: string[];
  idTokenSignedResponseAlg: SigningAlg;
  accessTokenFormat: AccessTokenFormat;
  backchannelLogoutUri: string | null;
  backchannelLogoutSessionRequired: boolean;
  clientUri: string | null;
  logoUri: string | null;
  description: string | null;
  subjectType: SubjectType;
}

/** What an application's developer gives: the token settings, back-channel logout and profile (homepage, logo, description) are optional. */
export interface ApplicationFields {
  name: string;
  redirectUris: string[];
  scopes: string[];
  postLogoutRedirectUris?: string[];
  idTokenSignedResponseAlg?: string;
  accessTokenFormat?: string;
  backchannelLogoutUri?: string | null;
  backchannelLogoutSessionRequired?: boolean;
  clientUri?: string | null;
  logoUri?: string | null;
  description?: string | null;
  /** `pairwise`: OpenID Connect pairwise subject identifiers (all redirect URIs on one host); `public` when absent. */
  subjectType?: SubjectType;
}

/** What the dashboard, the command line and dynamic registration all accept, checked the same way. */
export function validateApplicationInput(input: ApplicationFields, clientType: ClientType): ValidApplicationInput {
  return checkAll({
    subjectType: () => checkSubjectType(input.subjectType, input.redirectUris),
    backchannelLogoutUri: () => validateBackchannelLogoutUri(input.backchannelLogoutUri),
    backchannelLogoutSessionRequired: () => input.backchannelLogoutSessionRequired === true,
    name: () => {
      const name = input.name.trim();
      if (name.length < 1 || name.length > 100) throw new ApplicationError('INVALID_NAME', 'Name must be 1 to 100 characters', 'name');
      return name;
    },
    redirectUris: () => checkRedirectUris(input.redirectUris, clientType, 'redirectUris', 1),
    postLogoutRedirectUris: () => checkRedirectUris(input.postLogoutRedirectUris, clientType, 'postLogoutRedirectUris', 0),
    clientUri: () =>
      checkWebAddress(input.clientUri ?? undefined, {
        field: 'clientUri',
        label: 'Homepage URL',
        code: 'INVALID_CLIENT_URI',
        localHttp: true,
      }),
    logoUri: () =>
      checkWebAddress(input.logoUri ?? undefined, { field: 'logoUri', label: 'Logo URL', code: 'INVALID_LOGO_URI', localHttp: false }),
    description: () => checkDescription(input.description ?? undefined),
    scopes: () => {
      const scopes = [...new Set(input.scopes)];
      const unknown = scopes.filter((s) => !isScope(s));
      if (scopes.length === 0 || unknown.length > 0) {
        throw new ApplicationError(
          'INVALID_SCOPES',
          unknown.length ? `Unknown scopes: ${unknown.join(', ')}` : 'Choose at least one scope',
          'scopes',
        );
      }
      return scopes;
    },
    idTokenSignedResponseAlg: () => {
      const alg = input.idTokenSignedResponseAlg ?? DEFAULT_SIGNING_ALG;
      if (!isSigningAlg(alg)) {
        throw new ApplicationError('INVALID_SIGNING_ALG', `Choose one of ${SIGNING_ALGS.join(', ')}`, 'idTokenSignedResponseAlg');
      }
      return alg;
    },
    accessTokenFormat: () => {
      const format = input.accessTokenFormat ?? 'opaque';
      if (!(ACCESS_TOKEN_FORMATS as readonly string[]).includes(format)) {
        throw new ApplicationError('INVALID_ACCESS_TOKEN_FORMAT', `Choose one of ${ACCESS_TOKEN_FORMATS.join(', ')}`, 'accessTokenFormat');
      }
      return format as AccessTokenFormat;
    },
  });
}

/** The scopes a service account may be granted: the API's, never a person's (`openid`, `profile`, `email`, `offline_access`). */
export const SERVICE_ACCOUNT_SCOPES: readonly ScopeName[] = ['api', 'read_api'];

/** A service account's name and granted scopes, checked as the dashboard and the API both accept them. */
export function validateServiceAccountInput(input: { name: string; scopes: string[] }): { name: string; scopes: string[] } {
  return checkAll({
    name: () => {
      const name = input.name.trim();
      if (name.length < 1 || name.length > 100) throw new ApplicationError('INVALID_NAME', 'Name must be 1 to 100 characters', 'name');
      return name;
    },
    scopes: () => {
      const scopes = [...new Set(input.scopes)];
      const refused = scopes.filter((s) => !(SERVICE_ACCOUNT_SCOPES as readonly string[]).includes(s));
      if (scopes.length === 0 || refused.length > 0) {
        throw new ApplicationError(
          'INVALID_SCOPES',
          refused.length
            ? `A service account may hold only ${SERVICE_ACCOUNT_SCOPES.join(' and ')}, not: ${refused.join(', ')}`
            : 'Choose at least one scope',
          'scopes',
        );
      }
      return scopes;
    },
  });
}

/**
 * A pairwise client's sector is the host of its redirect URIs (no `sector_identifier_uri`): they must
 * all share one. Redirect URIs that cannot be read are left to their own check.
 */
function checkSubjectType(subjectType: SubjectType | undefined, redirectUris: string[]): SubjectType {
  if (subjectType === undefined || subjectType === 'public') return 'public';
  if (subjectType !== 'pairwise')
    throw new ApplicationError('INVALID_SUBJECT_TYPE', 'The subject type must be public or pairwise', 'subjectType');
  let sectors: string[];
  try {
    sectors = sectorsOf(redirectUris.map((u) => u.trim()).filter(Boolean));
  } catch {
    return 'pairwise';
  }
  if (sectors.length > 1) {
    throw new ApplicationError(
      'INVALID_SUBJECT_TYPE',
      `A pairwise client's redirect URIs must all be on one host, its sector (these are on ${sectors.join(', ')})`,
      'subjectType',
    );
  }
  return 'pairwise';
}
