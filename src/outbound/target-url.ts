import { isIP } from 'node:net';
import { addressProblem, metadataProblem } from './target-address.js';

/** Which targets the operator allows (AppConfig.webhooks). */
export interface TargetPolicy {
  /** http:// besides https:// (WEBHOOKS_ALLOW_HTTP). */
  allowHttp: boolean;
  /**
   * Any address, public or not, and any name (WEBHOOKS_ALLOW_PRIVATE_TARGETS): for on-premise receivers
   * and tests. It lifts every address and name check but one: cloud metadata services (169.254.169.254,
   * 169.254.170.2, fd00:ec2::254, metadata.google.internal) stay refused.
   */
  allowPrivateTargets: boolean;
}

/** The longest endpoint URL (the contract's limit, as the column allows). */
export const MAX_URL_LENGTH = 2048;

// Names that are never a public receiver, whatever a resolver says about them.
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog']);

/**
 * Why this URL may not be an endpoint, or null: not http(s) (http only with allowHttp), credentials or a
 * fragment in it, too long, a literal address or a name (localhost…) that is not public unless allowed
 * (cloud metadata services never are). Synchronous, no DNS: the checks a form can make as the user
 * types. Any port is allowed.
 */
export function urlProblem(url: string, policy: TargetPolicy): string | null {
  const shape = urlShapeProblem(url, policy);
  if (shape) return shape;
  const host = urlHost(new URL(url));
  return policy.allowPrivateTargets ? metadataHostProblem(host) : hostProblem(host);
}

/** What is wrong with the URL as written, whatever its host: urlProblem without the target checks. */
export function urlShapeProblem(url: string, policy: Pick<TargetPolicy, 'allowHttp'>): string | null {
  if (url.length > MAX_URL_LENGTH) return `the URL is longer than ${MAX_URL_LENGTH} characters`;
  if (url.trim() !== url) return 'the URL starts or ends with spaces';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a valid URL';
  }
  if (parsed.protocol === 'http:') {
    if (!policy.allowHttp) return 'the URL must start with https://';
  } else if (parsed.protocol !== 'https:') {
    return policy.allowHttp ? 'the URL must start with https:// or http://' : 'the URL must start with https://';
  }
  const authority = /^[a-z][a-z\d+.-]*:[/\\]*([^/\\?#]*)/i.exec(url)?.[1] ?? '';
  if (parsed.username || parsed.password || authority.includes('@')) {
    return 'the URL must not contain a user name or password';
  }
  if (url.includes('#')) return 'the URL must not contain a fragment (#…)';
  return null;
}

/** The host of a parsed URL as a resolver or socket takes it: IPv6 without brackets. */
export function urlHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** A literal address that is not public, or a name that never names a public receiver. */
function hostProblem(host: string): string | null {
  if (isIP(host)) return addressProblem(host);
  const name = host.replace(/\.+$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return `${host} is a local name`;
  return metadataHostProblem(host);
}

/** A cloud metadata service, by address or by name: refused whatever the operator allows. */
function metadataHostProblem(host: string): string | null {
  if (isIP(host)) return metadataProblem(host);
  return METADATA_NAMES.has(host.replace(/\.+$/, '')) ? `${host} is a cloud metadata service` : null;
}
