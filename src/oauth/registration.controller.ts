import { Body, Controller, HttpCode, Inject, NotFoundException, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OwnAuthentication, Public } from '../auth/public.decorator.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { networkKey, RateLimits } from '../rate-limits/rate-limits.service.js';
import { ClientInformation, ClientRegistrationService } from './client-registration.service.js';
import { registrationErrors } from './oauth-exception.filter.js';
import { OAuthError } from './oauth.errors.js';

/**
 * Dynamic client registration (RFC 7591), `POST /oauth/register`: open to anyone while
 * OAUTH_DYNAMIC_REGISTRATION=true (a 404 otherwise), limited per network (IPv4 /24, IPv6 /48): a
 * rate, and a share of the unclaimed applications (ClientRegistrationService).
 */
@Controller('oauth')
@Public()
@OwnAuthentication()
@UseFilters(registrationErrors)
export class RegistrationController {
  constructor(
    private readonly registration: ClientRegistrationService,
    private readonly rateLimits: RateLimits,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('register')
  @HttpCode(201)
  async register(
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: unknown,
  ): Promise<ClientInformation> {
    if (!this.config.oauth.dynamicRegistration) throw new NotFoundException(`Cannot POST ${req.url}`);
    void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    const network = networkKey(req.ip);
    await this.rateLimits.charge(reply, { budget: 'registration', key: network }, 1);
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') throw new OAuthError('invalid_client_metadata', 'Send the client metadata as application/json');
    return this.registration.register(body, network);
  }
}
