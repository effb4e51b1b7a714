import { Controller, Get, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OwnAuthentication, Public } from '../auth/public.decorator.js';
import { Clock } from '../clock/clock.js';
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
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  async authorize(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    const params = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
    return this.handle(req, reply, params, { enforceReauthentication: true }, async (request, signedIn) => {
      // prompt=consent asks again even when an earlier approval covers the scopes.
      if (!request.prompt.has('consent') && (await this.grants.covers(signedIn.user.id, request.application.id, request.scopes))) {
        return this.approve(reply, request, signedIn.user.id, signedIn.authTime);
      }
      if (request.prompt.has('none')) {
        return reply.redirect(
          this.location(request, {
            error: 'consent_required',
            error_description: 'The user has not approved this application for these scopes',
          }),
          302,
        );
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
    // The consent form answers a request whose sign-in rules were applied when the page was shown.
    return this.handle(req, reply, params, { enforceReauthentication: false }, async (request, signedIn) => {
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
    { enforceReauthentication }: { enforceReauthentication: boolean },
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
    const again = signedIn !== null && enforceReauthentication && this.mustSignInAgain(request, signedIn.authTime);
    if (!signedIn || again) {
      if (request.prompt.has('none')) {
        return reply.redirect(this.location(request, { error: 'login_required', error_description: 'The user must sign in' }), 302);
      }
      return reply.redirect(signInLocation(params, again), 302);
    }
    return next(request, signedIn);
  }

  /** prompt=login or select_account, or a sign-in older than max_age (OpenID Connect Core §3.1.2.1). */
  private mustSignInAgain(request: AuthorizationRequest, authTime: Date): boolean {
    if (request.prompt.has('login') || request.prompt.has('select_account')) return true;
    return request.maxAge !== undefined && this.clock.now().getTime() - authTime.getTime() > request.maxAge * 1000;
  }

  private async approve(reply: FastifyReply, request: AuthorizationRequest, userId: string, authTime: Date): Promise<FastifyReply> {
    const code = await this.codes.issue(request, userId, authTime);
    return reply.redirect(this.location(request, { code }), 302);
  }

  private location(request: AuthorizationRequest, params: Record<string, string>): string {
    return redirectLocation(request.redirectUri, { ...params, state: request.state }, this.config.baseUrl);
  }
}

/**
 * The sign-in page, coming back to this request once signed in. What asked for a new sign-in (prompt=login
 * or select_account, max_age) is left out of the way back: the sign-in about to happen satisfies it, and
 * keeping it would ask again forever. `reauth` shows the form even to a signed-in user.
 */
function signInLocation(params: URLSearchParams, reauth: boolean): string {
  const back = new URLSearchParams(params);
  back.delete('max_age');
  const prompt = (back.get('prompt') ?? '').split(' ').filter((p) => p && p !== 'login' && p !== 'select_account');
  if (prompt.length > 0) back.set('prompt', prompt.join(' '));
  else back.delete('prompt');
  const returnTo = `/oauth/authorize?${back.toString()}`;
  return `/sign-in?return_to=${encodeURIComponent(returnTo)}${reauth ? '&reauth=1' : ''}`;
}
