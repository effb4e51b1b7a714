import { checkAll } from '../../errors/domain-error.js';
import { isAgorasResource } from '../resource-indicator.js';
import { RESOURCE_SERVER_TOKEN_FORMATS, type ResourceServerTokenFormat } from './resource-server.model.js';
import { ResourceServerError } from './resource-servers.errors.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
export const MAX_IDENTIFIER_LENGTH = 2000;

/** What registers a resource server. */
export interface ResourceServerInput {
  name: string;
  identifier: string;
  /** Absent: `jwt`. */
  accessTokenFormat?: string;
}

/**
 * The identifier: an absolute URI without query nor fragment (RFC 8707 §2), https, or http on a
 * loopback host; never Agora's own API (BASE_URL or under it). Kept as given: clients send it verbatim.
 */
export function validateIdentifier(value: string, baseUrl: string): string {
  const identifier = value.trim();
  const invalid = (message: string) => new ResourceServerError('INVALID_IDENTIFIER', message, 'identifier');
  if (identifier.length === 0 || identifier.length > MAX_IDENTIFIER_LENGTH)
    throw invalid(`The identifier must be 1 to ${MAX_IDENTIFIER_LENGTH} characters`);
  if (/\s/.test(identifier)) throw invalid('The identifier must not contain spaces');
  let url: URL;
  try {
    url = new URL(identifier);
  } catch {
    throw invalid('The identifier must be an absolute URI, such as https://api.example.com');
  }
  if (identifier.includes('#')) throw invalid('The identifier must not contain a fragment (#)');
  if (identifier.includes('?')) throw invalid('The identifier must not contain a query (?)');
  if (url.username || url.password) throw invalid('The identifier must not contain credentials');
  if (!(url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname))))
    throw invalid('The identifier must use https (http is allowed only for localhost, 127.0.0.1 or [::1])');
  if (isAgorasResource(url, baseUrl)) throw invalid(`The identifier must not be Agora’s own API (${baseUrl} or an address under it)`);
  return identifier;
}

export function validateResourceServerInput(
  input: ResourceServerInput,
  baseUrl: string,
): { name: string; identifier: string; accessTokenFormat: ResourceServerTokenFormat } {
  return checkAll({
    name: () => {
      const name = input.name.trim();
      if (name.length < 1 || name.length > 100) throw new ResourceServerError('INVALID_NAME', 'Name must be 1 to 100 characters', 'name');
      return name;
    },
    identifier: () => validateIdentifier(input.identifier, baseUrl),
    accessTokenFormat: () => {
      const format = input.accessTokenFormat ?? 'jwt';
      if (!(RESOURCE_SERVER_TOKEN_FORMATS as readonly string[]).includes(format))
        throw new ResourceServerError(
          'INVALID_ACCESS_TOKEN_FORMAT',
          `The access token format must be one of: ${RESOURCE_SERVER_TOKEN_FORMATS.join(', ')}`,
          'accessTokenFormat',
        );
      return format as ResourceServerTokenFormat;
    },
  });
}
