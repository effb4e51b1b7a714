import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OwnAuthentication, Public } from '../auth/public.decorator.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { WebSession } from '../sessions/web-session.js';
import { sendPage } from '../web/security-headers.js';
import { explorerPage } from './explorer.page.js';

/** The offline GraphQL explorer for signed-in users (its script and styles are served from /assets). */
@Controller('explorer')
@Public()
@OwnAuthentication()
export class ExplorerController {
  constructor(
    private readonly session: WebSession,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  async show(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    const signedIn = await this.session.requireUser(req, reply);
    if (!signedIn) return reply;
    return sendPage(reply, explorerPage({ signedIn, csrfToken: this.session.csrfToken(req, reply), baseUrl: this.config.baseUrl }));
  }
}
