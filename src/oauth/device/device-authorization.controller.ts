import { Controller, HttpCode, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OwnAuthentication, Public } from '../../auth/public.decorator.js';
import { ClientAuthenticator, readParams, readResources } from '../clients/client-authentication.js';
import { ResourceIndicators } from '../resources/resource-indicators.js';
import { DeviceAuthorizationResponse, DeviceAuthorizationsService } from './device-authorizations.service.js';
import { oauthClientErrors } from '../oauth-exception.filter.js';

/**
 * The device authorization endpoint (RFC 8628 §3.1): a client identifies itself as at the token endpoint,
 * and may name the resources its tokens are for (RFC 8707 `resource`, repeatable).
 */
@Controller('oauth')
@Public()
@OwnAuthentication()
@UseFilters(oauthClientErrors)
export class DeviceAuthorizationController {
  constructor(
    private readonly clients: ClientAuthenticator,
    private readonly devices: DeviceAuthorizationsService,
    private readonly resourceIndicators: ResourceIndicators,
  ) {}

  @Post('device_authorization')
  @HttpCode(200)
  async authorize(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<DeviceAuthorizationResponse> {
    void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    const params = readParams(req.headers['content-type'], req.body);
    // The same budget as the client's token requests: each authorization is a row until it expires.
    const application = await this.clients.authenticateCharged(req, reply, params);
    // RFC 8707 `resource`, as at the authorization endpoint: Agora's API or registered resource servers.
    const { resources } = await this.resourceIndicators.resolve(readResources(req.body));
    return this.devices.start(application, params, resources);
  }
}
