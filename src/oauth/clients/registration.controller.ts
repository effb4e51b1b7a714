import { Body, Controller, Delete, Get, HttpCode, Inject, NotFoundException, Param, Post, Put, Req, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OwnAuthentication, Public } from '../../auth/public.decorator.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import { networkKey, RateLimits } from '../../rate-limits/rate-limits.service.js';
import { ClientInformation, ClientRegistrationService } from './client-registration.service.js';
import { RegistrationManagement } from './registration-management.js';
import { registrationErrors } from '../oauth-exception.filter.js';
import { OAuthError } from '../oauth.errors.js';

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
    private readonly management: RegistrationManagement,
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

  /** RFC 7592 §2.1: the client reads its registration with its registration access token. */
  @Get('register/:clientId')
  async read(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('clientId') clientId: string) {
    const application = await this.managed(req, reply, clientId);
    return this.management.read(application);
  }

  /** RFC 7592 §2.2: the client replaces its registration (every field, as when registering). */
  @Put('register/:clientId')
  @HttpCode(200)
  async update(
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('clientId') clientId: string,
    @Body() body: unknown,
  ): Promise<ClientInformation> {
    const application = await this.managed(req, reply, clientId);
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') throw new OAuthError('invalid_client_metadata', 'Send the client metadata as application/json');
    return this.management.update(application, body);
  }

  /** RFC 7592 §2.3: the client deletes its registration; its tokens stop working. */
  @Delete('register/:clientId')
  @HttpCode(204)
  async remove(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('clientId') clientId: string) {
    await this.management.delete(await this.managed(req, reply, clientId));
  }

  /**
   * The application the request's registration access token manages, charged to the network's
   * registration budget (guesses at tokens spend it as registrations do).
   */
  private async managed(req: FastifyRequest, reply: FastifyReply, clientId: string) {
    void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    await this.rateLimits.charge(reply, { budget: 'registration', key: networkKey(req.ip) }, 1);
    return this.management.authorize(clientId, req.headers.authorization);
  }
}
