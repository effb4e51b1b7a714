import { Injectable } from '@nestjs/common';
import type { ApplicationEntity } from '../clients/application.entity.js';
import type { TokenRequestParams } from '../clients/client-authentication.js';
import { OAuthError } from '../oauth.errors.js';
import { AccessTokensService } from '../tokens/access-tokens.service.js';
import { RefreshTokensService } from '../tokens/refresh-tokens.service.js';

/** Token revocation (RFC 7009) by the authenticated client. */
@Injectable()
export class Revocation {
  constructor(
    private readonly refreshTokens: RefreshTokensService,
    private readonly accessTokens: AccessTokensService,
  ) {}

  async revoke(application: ApplicationEntity, params: TokenRequestParams): Promise<void> {
    if (!params.token) throw new OAuthError('invalid_request', 'token is required');
    // token_type_hint is not needed: the prefix tells the kinds apart (RFC 7009 §2.1 lets a server ignore it).
    // A refresh token takes its family and the access tokens issued from it along.
    if (await this.refreshTokens.revokeForClient(params.token, application.id)) return;
    const active = await this.accessTokens.findActive(params.token);
    // Unknown tokens, and tokens of other clients, are answered the same way (RFC 7009 §2.2).
    if (active && active.principal.credential.clientId === application.clientId)
      await this.accessTokens.revoke([active.principal.credential.id]);
  }
}
