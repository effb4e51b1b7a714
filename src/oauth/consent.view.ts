import { isSelfRegistered } from './application.model.js';
import type { AuthorizationRequest } from './authorization-request.js';

/**
 * What the consent page shows and posts back, and nothing more: the application's name, the scopes,
 * where the user will be sent, and the authorization request's parameters. No entity reaches the
 * template; in particular never the application's client-secret hash.
 */
export interface ConsentView {
  applicationName: string;
  /** Registered by itself and claimed by no user: its name is whatever its registrant chose. */
  selfRegistered: boolean;
  scopes: readonly string[];
  /** The host of the redirect URI, or a native app's private-use scheme: where the user is sent back to. */
  destination: string;
  /** The request's parameters, in order, posted back with the decision (undefined ones are left out). */
  parameters: Readonly<Record<string, string | undefined>>;
}

export function toConsentView(request: AuthorizationRequest): ConsentView {
  return {
    applicationName: request.application.name,
    selfRegistered: isSelfRegistered(request.application),
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
    },
  };
}

/** The host a person recognises, or for a native app's private-use scheme the scheme itself. */
export function destinationOf(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.host || url.protocol;
}
