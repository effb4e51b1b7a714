import { checkAll } from '../errors/domain-error.js';
import { isScope } from '../auth/scopes.js';
import { ApplicationError } from './applications.errors.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A redirect URI must be absolute, without a fragment (RFC 6749 §3.1.2), and https unless it points
 * at this machine (for development). Kept exactly as given: authorization requests must match it
 * character for character.
 */
export function validateRedirectUri(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ApplicationError('INVALID_REDIRECT_URI', `"${value}" is not an absolute URL`, 'redirectUris');
  }
  if (url.hash || value.includes('#'))
    throw new ApplicationError('INVALID_REDIRECT_URI', 'Redirect URIs must not contain a fragment (#)', 'redirectUris');
  const localHttp = url.protocol === 'http:' && LOOPBACK.has(url.hostname);
  if (url.protocol !== 'https:' && !localHttp) {
    throw new ApplicationError('INVALID_REDIRECT_URI', 'Redirect URIs must use https (http is allowed only for localhost)', 'redirectUris');
  }
  if (url.username || url.password)
    throw new ApplicationError('INVALID_REDIRECT_URI', 'Redirect URIs must not contain credentials', 'redirectUris');
  return value;
}

export function validateApplicationInput(input: { name: string; redirectUris: string[]; scopes: string[] }): {
  name: string;
  redirectUris: string[];
  scopes: string[];
} {
  return checkAll({
    name: () => {
      const name = input.name.trim();
      if (name.length < 1 || name.length > 100) throw new ApplicationError('INVALID_NAME', 'Name must be 1 to 100 characters', 'name');
      return name;
    },
    redirectUris: () => {
      const redirectUris = [...new Set(input.redirectUris.map((u) => u.trim()).filter(Boolean))];
      if (redirectUris.length < 1 || redirectUris.length > 10) {
        throw new ApplicationError('INVALID_REDIRECT_URI', 'Give between 1 and 10 redirect URIs', 'redirectUris');
      }
      redirectUris.forEach(validateRedirectUri);
      return redirectUris;
    },
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
