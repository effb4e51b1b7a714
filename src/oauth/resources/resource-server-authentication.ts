import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RateLimits } from '../../rate-limits/rate-limits.service.js';
import { basicCredentials, INTROSPECTION_ID_PREFIX, type TokenRequestParams } from '../clients/client-authentication.js';
import { OAuthError } from '../oauth.errors.js';
import type { ResourceServer } from './resource-server.model.js';
import { ResourceServersService } from './resource-servers.service.js';

/**
 * A resource server's credential at the introspection endpoint (RFC 7662 §2.1): its introspection id
 * and secret, with HTTP Basic or in the body (`client_id`, `client_secret`), never both, as a client
 * sends its own. Recognised by the id's `rs_` prefix, which no client id has.
 */
@Injectable()
export class ResourceServerAuthenticator {
  constructor(
    private readonly servers: ResourceServersService,
    private readonly rateLimits: RateLimits,
  ) {}

  /**
   * The resource server, authenticated and charged one request of its own budget; null when the request
   * carries no resource server's id (a client's request, for ClientAuthenticator). A wrong secret, or the
   * id of a resource server that no longer exists, is `invalid_client`.
   */
  async authenticate(req: FastifyRequest, reply: FastifyReply, params: TokenRequestParams): Promise<ResourceServer | null> {
    const basic = basicCredentials(req.headers.authorization);
    const id = basic?.clientId ?? params.client_id;
    if (id === undefined || !id.startsWith(INTROSPECTION_ID_PREFIX)) return null;
    if (basic && params.client_secret !== undefined)
      throw new OAuthError('invalid_request', 'Use one client authentication method: HTTP Basic or client_secret in the body, not both');
    if (basic && params.client_id !== undefined && params.client_id !== basic.clientId)
      throw new OAuthError('invalid_request', 'client_id in the body differs from the one in the Authorization header');
    const secret = basic?.clientSecret ?? params.client_secret;
    if (secret === undefined) throw new OAuthError('invalid_client', 'A resource server authenticates with its introspection secret');
    const server = await this.servers.authenticate(id, secret);
    if (!server) throw new OAuthError('invalid_client', 'Unknown resource server or wrong secret');
    await this.rateLimits.charge(reply, { budget: 'client', key: id }, 1);
    return server;
  }
}
