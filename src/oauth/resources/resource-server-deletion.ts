import { Injectable } from '@nestjs/common';
import { AccessTokensService } from '../tokens/access-tokens.service.js';
import { RefreshTokensService } from '../tokens/refresh-tokens.service.js';
import type { ResourceServer } from './resource-server.model.js';
import { ResourceServersService } from './resource-servers.service.js';

/**
 * Deleting a resource server: its registration, then every live token issued for it (access tokens
 * whose audience names it, and the refresh token families authorized for it, with their access
 * tokens), so that nothing issued for it stays active, even if someone registers its identifier again.
 * Here rather than in ResourceServersService: the tokens are tokens/'s, which depends on this folder's module.
 */
@Injectable()
export class ResourceServerDeletion {
  constructor(
    private readonly servers: ResourceServersService,
    private readonly accessTokens: AccessTokensService,
    private readonly refreshTokens: RefreshTokensService,
  ) {}

  async delete(id: string, ownerId?: string): Promise<ResourceServer> {
    const deleted = await this.servers.delete(id, ownerId);
    await this.refreshTokens.revokeForResource(deleted.identifier);
    await this.accessTokens.revokeForAudience(deleted.identifier);
    return deleted;
  }
}
