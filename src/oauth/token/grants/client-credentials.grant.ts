import { Injectable, Logger } from '@nestjs/common';
import { isScope, parseScopeList } from '../../../auth/scopes.js';
import { ApplicationEntity } from '../../clients/application.entity.js';
import { isServiceAccount } from '../../clients/application.model.js';
import type { TokenRequestParams } from '../../clients/client-authentication.js';
import { OAuthError } from '../../oauth.errors.js';
import { AccessTokensService } from '../../tokens/access-tokens.service.js';
import { TokenGrant, TokenResponse, TokenResponseBuilder } from '../token-response.js';

/** Scopes that speak for a person: a service account acts for its organizer, never for anyone. */
const PERSON_SCOPES: ReadonlySet<string> = new Set(['openid', 'profile', 'email', 'offline_access']);

/**
 * grant_type=client_credentials (RFC 6749 §4.4), for service accounts only: an organizer's confidential
 * application, which gets an access token acting for that organizer with the scopes its owner granted
 * (all of them, or the narrower `scope` asked for), and nothing else: no refresh token (it asks again
 * with its secret), no id_token (there is no person to describe). Each token issued is logged as an
 * audit line (client, organizer, scopes, token id).
 */
@Injectable()
export class ClientCredentialsGrant implements TokenGrant {
  readonly grantType = 'client_credentials';
  private readonly logger = new Logger('ServiceAccounts');

  constructor(
    private readonly accessTokens: AccessTokensService,
    private readonly responses: TokenResponseBuilder,
  ) {}

  async exchange(application: ApplicationEntity, params: TokenRequestParams, resources: readonly string[]): Promise<TokenResponse> {
    if (!isServiceAccount(application))
      throw new OAuthError('unauthorized_client', 'Only a service account (an organizer’s application) may use client_credentials');
    const scopes = params.scope === undefined ? application.scopes : requestedScopes(params.scope, application.scopes);
    // Any resource it names (RFC 8707: Agora's API, a registered resource server) is its token's audience.
    const accessToken = await this.accessTokens.issueForServiceAccount(application.id, scopes, application.accessTokenFormat, resources);
    this.logger.log(
      `Service account token issued: client ${application.clientId}, organizer ${application.organizerId}, scopes "${scopes.join(' ')}"${resources.length > 0 ? `, resources "${resources.join(' ')}"` : ''}, token ${accessToken.id}`,
    );
    return this.responses.build({
      application,
      accessToken,
      user: null,
      scopes,
      audience: resources,
      authTime: new Date(0),
      amr: [],
      nonce: null,
    });
  }
}

/** The scope asked for (RFC 6749 §3.3): known, none of a person's, and within what the owner granted. */
function requestedScopes(value: string, granted: readonly string[]): string[] {
  const scopes = parseScopeList(value);
  if (scopes.length === 0) throw new OAuthError('invalid_scope', 'scope is empty: leave it out to get every granted scope');
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) throw new OAuthError('invalid_scope', `Unknown scope: ${unknown.join(' ')}`);
  const personal = scopes.filter((s) => PERSON_SCOPES.has(s));
  if (personal.length)
    throw new OAuthError(
      'invalid_scope',
      `A service account acts for its organizer, never for a person: ${personal.join(' ')} cannot be granted`,
    );
  const beyond = scopes.filter((s) => !granted.includes(s));
  if (beyond.length) throw new OAuthError('invalid_scope', `Not granted to this service account: ${beyond.join(' ')}`);
  return scopes;
}
