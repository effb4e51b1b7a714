import { Controller, Get, Header, HttpCode, Inject, Post, UseFilters } from '@nestjs/common';
import { CurrentPrincipal } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import { IgnoresCredentials, RequireScopes } from '../auth/public.decorator.js';
import { SCOPES } from '../auth/scopes.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { userClaims } from './id-token.service.js';
import { PROMPTS } from './authorization-request.js';
import { DEVICE_CODE_GRANT_TYPE } from './device-code-grant.js';
import { oauthErrors } from './oauth-exception.filter.js';
import { PublicJwk, SigningKeysService } from './signing-keys.service.js';

/** OpenID Connect Discovery 1.0, the JWKS and the UserInfo endpoint. */
@Controller()
@UseFilters(oauthErrors)
export class OidcController {
  constructor(
    private readonly keys: SigningKeysService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('.well-known/openid-configuration')
  @IgnoresCredentials()
  @Header('cache-control', 'public, max-age=300')
  discovery(): Record<string, unknown> {
    const base = this.config.baseUrl;
    return {
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      userinfo_endpoint: `${base}/oauth/userinfo`,
      jwks_uri: `${base}/oauth/discovery/keys`,
      revocation_endpoint: `${base}/oauth/revoke`,
      introspection_endpoint: `${base}/oauth/introspect`,
      device_authorization_endpoint: `${base}/oauth/device_authorization`,
      end_session_endpoint: `${base}/oauth/logout`,
      scopes_supported: Object.keys(SCOPES),
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT_TYPE],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      // none: public clients, which identify themselves by client_id and prove the code with PKCE.
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256'],
      claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'name', 'preferred_username', 'email', 'email_verified'],
      prompt_values_supported: [...PROMPTS],
      authorization_response_iss_parameter_supported: true,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      claims_parameter_supported: false,
    };
  }

  @Get('oauth/discovery/keys')
  @IgnoresCredentials()
  @Header('cache-control', 'public, max-age=300')
  jwks(): Promise<{ keys: PublicJwk[] }> {
    return this.keys.jwks();
  }

  @Get('oauth/userinfo')
  @RequireScopes('openid')
  @Header('cache-control', 'no-store')
  userinfo(@CurrentPrincipal() principal: Principal): Record<string, unknown> {
    return { sub: principal.user.id, ...userClaims(principal.user, principal.scopes) };
  }

  @Post('oauth/userinfo')
  @HttpCode(200)
  @RequireScopes('openid')
  @Header('cache-control', 'no-store')
  userinfoPost(@CurrentPrincipal() principal: Principal): Record<string, unknown> {
    return this.userinfo(principal);
  }
}
