import { Controller, Get, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OwnAuthentication, Public } from '../auth/public.decorator.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { WebSession } from '../sessions/web-session.js';
import { sendPage } from '../web/security-headers.js';
import { AuthorizationCodesService } from './authorization-codes.service.js';
import {
  AuthorizationRedirectError,
  AuthorizationRequest,
  AuthorizationRequestValidator,
  redirectLocation,
} from './authorization-request.js';
import { GrantsService } from './grants.service.js';
import { AuthorizationPageError } from './oauth.errors.js';
import { authorizationErrorPage, consentPage } from './oauth.pages.js';

/** `/oauth/authorize`: checks the request, signs the user in if needed, asks for consent, issues the code. */
@Controller('oauth/authorize')
@Public()
@OwnAuthentication()
export class AuthorizeController {
  constructor(
    private readonly validator: AuthorizationRequestValidator,
    private readonly codes: AuthorizationCodesService,
    private readonly grants: GrantsService,
    private readonly session: WebSession,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  async authorize(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    const params = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
    return this.handle(req, reply, params, async (request, signedIn) => {
      if (await this.grants.covers(signedIn.user.id, request.application.id, request.scopes)) {
        return this.approve(reply, request, signedIn.user.id, signedIn.authTime);
      }
      const csrfToken = this.session.csrfToken(req, reply);
      // The approval answers with a redirect to the client, which form-action must allow.
      return sendPage(reply, consentPage({ request, user: signedIn.user, csrfToken }), {
        formActions: [new URL(request.redirectUri).origin],
      });
    });
  }

  @Post()
  async decide(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    if (!this.session.acceptForm(req, reply)) return reply;
    const body = (req.body ?? {}) as Record<string, unknown>;
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(body)) {
      if (name === '_csrf' || name === 'decision') continue;
      for (const v of Array.isArray(value) ? value : [value]) if (typeof v === 'string') params.append(name, v);
    }
    return this.handle(req, reply, params, async (request, signedIn) => {
      if (body.decision === 'approve') {
        await this.grants.remember(signedIn.user.id, request.application.id, request.scopes);
        return this.approve(reply, request, signedIn.user.id, signedIn.authTime);
      }
      if (body.decision === 'deny') {
        return reply.redirect(this.location(request, { error: 'access_denied', error_description: 'The user denied the request' }), 302);
      }
      return sendPage(reply, authorizationErrorPage('The form must say decision=approve or decision=deny.'), { status: 400 });
    });
  }

  /** Validation, error answers and sign-in shared by both steps; `next` runs for a signed-in user. */
  private async handle(
    req: FastifyRequest,
    reply: FastifyReply,
    params: URLSearchParams,
    next: (request: AuthorizationRequest, signedIn: NonNullable<Awaited<ReturnType<WebSession['current']>>>) => Promise<FastifyReply>,
  ): Promise<FastifyReply> {
    let request: AuthorizationRequest;
    try {
      request = await this.validator.validate(params);
    } catch (err) {
      if (err instanceof AuthorizationPageError) return sendPage(reply, authorizationErrorPage(err.description), { status: 400 });
      if (err instanceof AuthorizationRedirectError) {
        const location = redirectLocation(
          err.redirectUri,
          { error: err.code, error_description: err.description, state: err.state },
          this.config.baseUrl,
        );
        return reply.redirect(location, 302);
      }
      throw err;
    }
    const signedIn = await this.session.current(req);
    if (!signedIn) {
      const returnTo = `/oauth/authorize?${params.toString()}`;
      return reply.redirect(`/sign-in?return_to=${encodeURIComponent(returnTo)}`, 302);
    }
    return next(request, signedIn);
  }

  private async approve(reply: FastifyReply, request: AuthorizationRequest, userId: string, authTime: Date): Promise<FastifyReply> {
    const code = await this.codes.issue(request, userId, authTime);
    return reply.redirect(this.location(request, { code }), 302);
  }

  private location(request: AuthorizationRequest, params: Record<string, string>): string {
    return redirectLocation(request.redirectUri, { ...params, state: request.state }, this.config.baseUrl);
  }
}
