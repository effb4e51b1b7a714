import { Controller, Get, Header, HttpCode, Post, UseFilters } from '@nestjs/common';
import { CurrentPrincipal } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import { IgnoresCredentials, RequireScopes } from '../auth/public.decorator.js';
import { RateLimited } from '../rate-limits/rate-limited.decorator.js';
import { userClaims } from './id-token.service.js';
import { oauthErrors } from './oauth-exception.filter.js';
import { PublicJwk, SigningKeysService } from './signing-keys.service.js';

/**
 * The JWKS and the UserInfo endpoint (discovery: MetadataController). UserInfo is charged to the access
 * token's API budget like a REST request (1 point, a refused token to its address's).
 */
@Controller()
@UseFilters(oauthErrors)
export class OidcController {
  constructor(private readonly keys: SigningKeysService) {}

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
  userinfo(@CurrentPrincipal() principal: Principal): Record<string, unknown> {
    return { sub: principal.user.id, ...userClaims(principal.user, principal.scopes) };
  }

  @Post('oauth/userinfo')
  @HttpCode(200)
  @RequireScopes('openid')
  @RateLimited()
  @Header('cache-control', 'no-store')
  userinfoPost(@CurrentPrincipal() principal: Principal): Record<string, unknown> {
    return this.userinfo(principal);
  }
}
