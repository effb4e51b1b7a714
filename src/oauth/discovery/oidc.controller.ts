import { Controller, Get, Header, HttpCode, Post, UseFilters } from '@nestjs/common';
import { CurrentPrincipal } from '../../auth/current-principal.decorator.js';
import { personOf, type Principal } from '../../auth/principal.js';
import { IgnoresCredentials, RequireScopes } from '../../auth/public.decorator.js';
import { RateLimited } from '../../rate-limits/rate-limited.decorator.js';
import { userClaims } from '../keys/id-token.service.js';
import { oauthErrors } from '../oauth-exception.filter.js';
import { PublicJwk, SigningKeysService } from '../keys/signing-keys.service.js';
import { ApplicationsService } from '../clients/applications.service.js';
import { Subjects } from '../subjects/subjects.js';

/**
 * The JWKS and the UserInfo endpoint (discovery: MetadataController). UserInfo is charged to the access
 * token's API budget like a REST request (1 point, a refused token to its address's).
 */
@Controller()
@UseFilters(oauthErrors)
export class OidcController {
  constructor(
    private readonly keys: SigningKeysService,
    private readonly applications: ApplicationsService,
    private readonly subjects: Subjects,
  ) {}

  @Get('oauth/discovery/keys')
  @IgnoresCredentials()
  @Header('cache-control', 'public, max-age=300')
  jwks(): Promise<{ keys: PublicJwk[] }> {
    return this.keys.jwks();
  }

  @Get('oauth/userinfo')
  @RequireScopes('openid')
  @RateLimited()
  @Header('cache-control', 'no-store')
  async userinfo(@CurrentPrincipal() principal: Principal): Promise<Record<string, unknown>> {
    const user = personOf(principal);
    // The `sub` of the client the token was issued to (a pairwise client sees its own), as in its id_token.
    const clientId = principal.credential.clientId;
    const application = clientId ? await this.applications.findClient(clientId) : null;
    const sub = application ? this.subjects.of(application, user.id) : user.id;
    return { sub, ...userClaims(user, principal.scopes) };
  }

  @Post('oauth/userinfo')
  @HttpCode(200)
  @RequireScopes('openid')
  @RateLimited()
  @Header('cache-control', 'no-store')
  userinfoPost(@CurrentPrincipal() principal: Principal): Promise<Record<string, unknown>> {
    return this.userinfo(principal);
  }
}
