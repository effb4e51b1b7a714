import type { CspAdditions } from '../../web/security-headers.js';
import type { ApplicationEntity } from '../clients/application.entity.js';
import { destinationOf, showsUnverifiedNotice } from '../interaction/interaction-rules.js';
import type { AuthorizationRequest } from './authorization-request.js';

/**
 * What its owner says of an application: description, homepage and logo (https), each null when not
 * given, and who that owner is. All null for a self-registered application: nobody answers for what it
 * would show. The consent page and the device flow's show it alike (`applicationHeading`).
 */
export interface ApplicationProfile {
  description: string | null;
  homepage: string | null;
  logo: string | null;
  owner: ApplicationOwner | null;
}

export function applicationProfileOf(
  application: Pick<ApplicationEntity, 'ownerId' | 'organizerId' | 'description' | 'clientUri' | 'logoUri'>,
  owner: ApplicationOwner | null,
): ApplicationProfile {
  if (showsUnverifiedNotice(application)) return { description: null, homepage: null, logo: null, owner: null };
  const { description, clientUri, logoUri } = application;
  return { description: description ?? null, homepage: clientUri ?? null, logo: logoUri ?? null, owner };
}

/** A host of plain letters, digits, dots and hyphens (IDN in punycode passes): safe to name in a header. */
const PLAIN_HOST = /^[A-Za-z0-9.-]+$/;

/**
 * What a page showing the profile adds to its Content-Security-Policy: the logo's origin (an https
 * address its owner registered), and only that. A host that is not plain is left out, so no character
 * of it ever reaches the header; the logo is then not shown.
 */
export function profileCsp(profile: ApplicationProfile): { csp?: CspAdditions } {
  const logo = profile.logo ? new URL(profile.logo) : null;
  return logo && PLAIN_HOST.test(logo.hostname) ? { csp: { imgSrc: [logo.origin] } } : {};
}

/**
 * What the consent page shows and posts back, and nothing more: the application's name, the scopes,
 * where the user will be sent, and the authorization request's parameters. No entity reaches the
 * template; in particular never the application's client-secret hash.
 */
export interface ConsentView {
  applicationName: string;
  /** Registered by itself and claimed by no user: its name is whatever its registrant chose. */
  selfRegistered: boolean;
  profile: ApplicationProfile;
  scopes: readonly string[];
  /** The host of the redirect URI, or a native app's private-use scheme: where the user is sent back to. */
  destination: string;
  /** The request's parameters, in order, posted back with the decision (undefined ones are left out). */
  parameters: Readonly<Record<string, string | undefined>>;
  /** The `resource` values (RFC 8707), posted back too: the parameter may be repeated. */
  resources: readonly string[];
  /** The registered resource servers the token is for besides (or instead of) Agora's API, named for the user. */
  resourceServers: readonly ConsentResourceServer[];
}

/** A resource server other than Agora the client asks a token for: where the token will be used. */
export interface ConsentResourceServer {
  name: string;
  identifier: string;
  /** Its owner's name; null if unknown (never for a live one). */
  owner: string | null;
}

/** Who registered an application, as the consent page names them. */
export interface ApplicationOwner {
  name: string;
  username: string;
}

export function toConsentView(
  request: AuthorizationRequest,
  owner: ApplicationOwner | null = null,
  resourceServerOwners: ReadonlyMap<string, string> = new Map(),
): ConsentView {
  return {
    applicationName: request.application.name,
    selfRegistered: showsUnverifiedNotice(request.application),
    profile: applicationProfileOf(request.application, owner),
    scopes: [...request.scopes],
    destination: destinationOf(request.redirectUri),
    parameters: {
      response_type: 'code',
      client_id: request.application.clientId,
      redirect_uri: request.redirectUri,
      scope: request.scopes.join(' '),
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
      state: request.state,
      nonce: request.nonce,
      response_mode: request.responseMode === 'query' ? undefined : request.responseMode,
    },
    resources: [...request.resources],
    resourceServers: request.resourceServers.map((s) => ({
      name: s.name,
      identifier: s.identifier,
      owner: resourceServerOwners.get(s.ownerId) ?? null,
    })),
  };
}
