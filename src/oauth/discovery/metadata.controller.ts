import { Controller, Get, Header, Inject, NotFoundException, Param, UseFilters } from '@nestjs/common';
import { IgnoresCredentials } from '../../auth/public.decorator.js';
import { PROTECTED_RESOURCE_METADATA_PATH, resourceOfMetadataSuffix } from '../../auth/protected-resource.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { oauthErrors } from '../oauth-exception.filter.js';
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
    return protectedResourceMetadata(this.config.baseUrl, this.config.baseUrl);
  }

  /** RFC 9728 §3.1: the metadata of a narrower resource at the path-inserted address (`…/graphql`). */
  @Get(`${PROTECTED_RESOURCE_METADATA_PATH.slice(1)}/:path`)
  @IgnoresCredentials()
  @Header('cache-control', 'public, max-age=300')
  protectedResourceAt(@Param('path') path: string): Record<string, unknown> {
    const resource = resourceOfMetadataSuffix(this.config.baseUrl, `/${path}`);
    if (resource === undefined) throw new NotFoundException();
    return protectedResourceMetadata(this.config.baseUrl, resource);
  }

  private options(): MetadataOptions {
    return { issuer: this.config.baseUrl, registration: this.config.oauth.dynamicRegistration };
  }
}
