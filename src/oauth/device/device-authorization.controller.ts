import { Controller, HttpCode, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OwnAuthentication, Public } from '../../auth/public.decorator.js';
import { ClientAuthenticator, readParams } from '../clients/client-authentication.js';
import { DeviceAuthorizationResponse, DeviceAuthorizationsService } from './device-authorizations.service.js';
import { oauthClientErrors } from '../oauth-exception.filter.js';

/** The device authorization endpoint (RFC 8628 §3.1): a client identifies itself as at the token endpoint. */
@Controller('oauth')
@Public()
@OwnAuthentication()
@UseFilters(oauthClientErrors)
export class DeviceAuthorizationController {
  constructor(
    private readonly clients: ClientAuthenticator,
    private readonly devices: DeviceAuthorizationsService,
  ) {}

  @Post('device_authorization')
  @HttpCode(200)
  async authorize(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<DeviceAuthorizationResponse> {
    void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    const params = readParams(req.headers['content-type'], req.body);
    // The same budget as the client's token requests: each authorization is a row until it expires.
    return this.devices.start(await this.clients.authenticateCharged(req, reply, params), params);
  }
}
