import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { OAuthError } from '../oauth.errors.js';
import { isAgorasResource, parseResourceIndicator } from '../resource-indicator.js';
import type { ResourceServer } from './resource-server.model.js';
import { ResourceServersService } from './resource-servers.service.js';

/** The `resource` values of a request, resolved. */
export interface ResolvedResources {
  /** Without duplicates: BASE_URL for Agora's API (whatever address under it was sent), a registered identifier otherwise. */
  resources: string[];
  /** The registered resource servers among them. */
  servers: ResourceServer[];
}

/**
 * RFC 8707 `resource` values at the authorization, token and device endpoints: each is Agora's API
 * (BASE_URL or an address under it) or exactly the identifier of a registered resource server; anything
 * else makes the whole request `invalid_target`.
 */
@Injectable()
export class ResourceIndicators {
  constructor(
    private readonly servers: ResourceServersService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async resolve(values: readonly string[]): Promise<ResolvedResources> {
    const agora = this.config.baseUrl;
    const others = new Set<string>();
    const resources = new Set<string>();
    for (const value of values) {
      if (isAgorasResource(parseResourceIndicator(value), agora)) resources.add(agora);
      else others.add(value);
    }
    const servers = await this.servers.findByIdentifiers([...others]);
    const unknown = [...others].filter((value) => !servers.some((s) => s.identifier === value));
    if (unknown.length > 0) {
      throw new OAuthError('invalid_target', `Unknown resource: ${unknown.join(' ')} is neither ${agora} nor a registered resource server`);
    }
    for (const value of values) if (others.has(value)) resources.add(value);
    return { resources: [...resources], servers };
  }
}
