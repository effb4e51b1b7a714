import { Body, Controller, Get, Inject, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import type { SignedInUser } from '../sessions/sessions.service.js';
import type { PageResult } from '../web/page-result.js';
import { Redirect, view } from '../web/page-result.js';
import { AnonymousPage, CurrentSession, Pages } from '../web/pages.decorator.js';
import { AuthenticationRequirement, stepUpLocation } from './authentication-requirement.js';
import { AuthorizationCodesService } from './authorization-codes.service.js';
import {
  AuthorizationRedirectError,
  AuthorizationRequest,
  AuthorizationRequestValidator,
  formActionSource,
  redirectLocation,
} from './authorization-request.js';
import { isSelfRegistered } from './application.model.js';
import { destinationOf, toConsentView } from './consent.view.js';
import { GrantsService } from './grants.service.js';
import { AuthorizationPageError } from './oauth.errors.js';
import { authorizationErrorPage, consentPage, returnToApplicationPage } from './oauth.pages.js';

/**
 * `/oauth/authorize`: checks the request, signs the user in if needed (prompt, max_age), has them prove
 * a second factor if the client asked for one (acr_values), asks for consent, issues the code. A page
 * open to anyone: a visitor who is not signed in is sent to sign in (or, with prompt=none, back to the
 * client with login_required) by the pipeline below.
 */
@Controller('oauth/authorize')
@Pages()
@AnonymousPage()
export class AuthorizeController {
  constructor(
    private readonly validator: AuthorizationRequestValidator,
    private readonly codes: AuthorizationCodesService,
    private readonly grants: GrantsService,
    private readonly requirement: AuthenticationRequirement,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  async authorize(@Req() req: FastifyRequest, @CurrentSession() session: SignedInUser | null): Promise<PageResult> {
    const params = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
    return this.handle(session, params, { enforceReauthentication: true }, async (request, signedIn) => {
      // prompt=consent asks again even when an earlier approval covers the scopes; so does a request of
      // a native app (RFC 8252 §8.6): any program on the device can use its loopback or private-use
      // redirect URI with a PKCE pair of its own, so only the user can tell the real app from another.
      if (
        !request.prompt.has('consent') &&
        !asksEveryTime(request) &&
        (await this.grants.covers(signedIn.user.id, request.application.id, request.scopes))
      ) {
        await this.grants.approvedByGrant(request.application);
        return this.approve(request, signedIn);
      }
      if (request.prompt.has('none')) {
        return this.errorToClient(request, {
          error: 'consent_required',
          error_description: 'The user has not approved this application for these scopes',
          state: request.state,
        });
      }
      // The approval answers with a redirect to the client, which form-action must allow.
      return view((c) => consentPage({ consent: toConsentView(request), user: signedIn.user, csrfToken: c.csrfToken }), {
        formActions: [formActionSource(request.redirectUri)],
      });
    });
  }

  @Post()
  async decide(@CurrentSession() session: SignedInUser | null, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(body)) {
      if (name === '_csrf' || name === 'decision') continue;
      for (const v of Array.isArray(value) ? value : [value]) if (typeof v === 'string') params.append(name, v);
    }
    // The consent form answers a request whose sign-in rules (prompt, max_age) were applied when the page
    // was shown; acr_values is checked again, as it cannot ask forever.
    return this.handle(session, params, { enforceReauthentication: false }, async (request, signedIn) => {
      if (body.decision === 'approve') {
        await this.grants.remember(signedIn.user.id, request.application.id, request.scopes);
        return this.approve(request, signedIn);
      }
      if (body.decision === 'deny') {
        return this.toClient(request, { error: 'access_denied', error_description: 'The user denied the request' });
      }
      return view(() => authorizationErrorPage('The form must say decision=approve or decision=deny.'), { status: 400 });
    });
  }

  /**
   * Validation, error answers, sign-in and the second factor shared by both steps; `next` runs for a
   * signed-in user whose sign-in meets the request.
   */
  private async handle(
    signedIn: SignedInUser | null,
    params: URLSearchParams,
    { enforceReauthentication }: { enforceReauthentication: boolean },
    next: (request: AuthorizationRequest, signedIn: SignedInUser) => Promise<PageResult>,
  ): Promise<PageResult> {
    let request: AuthorizationRequest;
    try {
      request = await this.validator.validate(params);
    } catch (err) {
      if (err instanceof AuthorizationPageError) return view(() => authorizationErrorPage(err.description), { status: 400 });
      if (err instanceof AuthorizationRedirectError) {
        return this.errorToClient(err, { error: err.code, error_description: err.description, state: err.state }, 400);
      }
      throw err;
    }
    const again = signedIn !== null && enforceReauthentication && this.mustSignInAgain(request, signedIn.authTime);
    if (!signedIn || again) {
      if (request.prompt.has('none')) {
        return this.errorToClient(request, { error: 'login_required', error_description: 'The user must sign in', state: request.state });
      }
      return new Redirect(signInLocation(params, again), 302);
    }
    const requirement = await this.requirement.check(signedIn, request.acr);
    if (requirement.outcome === 'unmet') {
      return this.errorToClient(request, {
        error: 'unmet_authentication_requirements',
        error_description: `The application requires a sign-in of class ${request.acr}, and this account has no second factor that can give it`,
        state: request.state,
      });
    }
    if (requirement.outcome === 'step-up') {
      // prompt=none: the user could meet the requirement, but only by interacting (Core §3.1.2.6).
      if (request.prompt.has('none')) {
        return this.errorToClient(request, {
          error: 'interaction_required',
          error_description: `The user must confirm the sign-in with a second factor (acr ${request.acr})`,
          state: request.state,
        });
      }
      return new Redirect(stepUpLocation(`/oauth/authorize?${params.toString()}`, requirement.require), 302);
    }
    return next(request, signedIn);
  }

  /**
   * prompt=login or select_account, max_age=0 (which is prompt=login), or a sign-in older than max_age
   * (OpenID Connect Core §3.1.2.1). The session's auth_time is its last active proof: a second step taken
   * later (acr_values) counts as one.
   */
  private mustSignInAgain(request: AuthorizationRequest, authTime: Date): boolean {
    if (request.prompt.has('login') || request.prompt.has('select_account')) return true;
    if (request.maxAge === undefined) return false;
    return request.maxAge === 0 || this.clock.now().getTime() - authTime.getTime() > request.maxAge * 1000;
  }

  private async approve(request: AuthorizationRequest, signedIn: SignedInUser): Promise<PageResult> {
    const code = await this.codes.issue(request, signedIn.user.id, { authTime: signedIn.authTime, amr: signedIn.amr });
    return this.toClient(request, { code });
  }

  /**
   * An error response the user did not choose (RFC 6749 §4.1.2.1, or prompt=none's answers): a redirect
   * back to the client, except for a self-registered application, whose registrant chose the redirect URI
   * and could otherwise send anyone anywhere through this server (an open redirector, RFC 9700 §4.11.2).
   * That one gets a page with the same answer as a link, under where it leads.
   */
  private errorToClient(
    request: Pick<AuthorizationRequest, 'application' | 'redirectUri'>,
    params: { error: string; error_description: string; state: string | undefined },
    status: 200 | 400 = 200,
  ): PageResult {
    const location = redirectLocation(request.redirectUri, params, this.config.baseUrl);
    if (!isSelfRegistered(request.application)) return new Redirect(location, 302);
    return view(
      () =>
        returnToApplicationPage({
          applicationName: request.application.name,
          destination: destinationOf(request.redirectUri),
          location,
          heading: HEADINGS[params.error] ?? 'This authorization request is not valid',
          description: params.error_description,
        }),
      { status },
    );
  }

  /** Back to the client's redirect URI with the response parameters (and state, iss). */
  private toClient(request: AuthorizationRequest, params: Record<string, string>): Redirect {
    return new Redirect(redirectLocation(request.redirectUri, { ...params, state: request.state }, this.config.baseUrl), 302);
  }
}

/** What the page of an error answer to a self-registered application calls it. */
const HEADINGS: Record<string, string> = {
  login_required: 'You are not signed in to Agora',
  consent_required: 'You have not approved this application',
  unmet_authentication_requirements: 'This application requires a second factor',
  interaction_required: 'This application needs you to confirm your sign-in',
};

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

/** A public client whose redirect URI is not https (loopback or a private-use scheme): a native app. */
function asksEveryTime(request: AuthorizationRequest): boolean {
  return request.application.clientType === 'public' && !request.redirectUri.startsWith('https://');
}
