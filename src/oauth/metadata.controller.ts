import { Controller, Get, Header, Inject, UseFilters } from '@nestjs/common';
import { IgnoresCredentials } from '../auth/public.decorator.js';
import { PROTECTED_RESOURCE_METADATA_PATH } from '../auth/protected-resource.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { oauthErrors } from './oauth-exception.filter.js';
import { protectedResourceMetadata } from './protected-resource-metadata.js';
import { authorizationServerMetadata, MetadataOptions, openidProviderMetadata } from './server-metadata.js';

/**
 * Discovery: OpenID Connect Discovery 1.0 and RFC 8414 describe the authorization server (both built
 * from server-metadata.ts), RFC 9728 the API it protects. The same for everyone, cacheable.
 */
@Controller()
@UseFilters(oauthErrors)
export class MetadataController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get('.well-known/openid-configuration')
  @IgnoresCredentials()
  @Header('cache-control', 'public, max-age=300')
  openidConfiguration(): Record<string, unknown> {
    return openidProviderMetadata(this.options());
  }

  @Get('.well-known/oauth-authorization-server')
  @IgnoresCredentials()
  @Header('cache-control', 'public, max-age=300')
  authorizationServer(): Record<string, unknown> {
    return authorizationServerMetadata(this.options());
  }

  @Get(PROTECTED_RESOURCE_METADATA_PATH.slice(1))
  @IgnoresCredentials()
  @Header('cache-control', 'public, max-age=300')
  protectedResource(): Record<string, unknown> {
    return protectedResourceMetadata(this.config.baseUrl);
  }

  private options(): MetadataOptions {
    return { issuer: this.config.baseUrl, registration: this.config.oauth.dynamicRegistration };
  }
}
