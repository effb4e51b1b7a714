import { checkAll } from '../errors/domain-error.js';
import { isScope } from '../auth/scopes.js';
import { ApplicationError } from './applications.errors.js';
import type { ClientType } from './application.entity.js';

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

function checkRedirectUris(values: string[] | undefined, clientType: ClientType, field: string, min: number): string[] {
  const uris = [...new Set((values ?? []).map((u) => u.trim()).filter(Boolean))];
  if (uris.length < min || uris.length > 10) {
    throw new ApplicationError('INVALID_REDIRECT_URI', min ? 'Give between 1 and 10 redirect URIs' : 'Give at most 10 URIs', field);
  }
  uris.forEach((uri) => validateRedirectUri(uri, clientType, field));
  return uris;
}

export interface ValidApplicationInput {
  name: string;
  redirectUris: string[];
  scopes: string[];
  postLogoutRedirectUris: string[];
}

/** What the dashboard, the command line and dynamic registration all accept, checked the same way. */
export function validateApplicationInput(
  input: { name: string; redirectUris: string[]; scopes: string[]; postLogoutRedirectUris?: string[] },
  clientType: ClientType,
): ValidApplicationInput {
  return checkAll({
    name: () => {
      const name = input.name.trim();
      if (name.length < 1 || name.length > 100) throw new ApplicationError('INVALID_NAME', 'Name must be 1 to 100 characters', 'name');
      return name;
    },
    redirectUris: () => checkRedirectUris(input.redirectUris, clientType, 'redirectUris', 1),
    postLogoutRedirectUris: () => checkRedirectUris(input.postLogoutRedirectUris, clientType, 'postLogoutRedirectUris', 0),
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
  });
}
