import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../../clock/clock.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.schema.js';
import type { SignedInUser } from '../../web/page-sessions.js';
import type { PageResult } from '../../web/page-result.js';
import { Redirect, view } from '../../web/page-result.js';
import { backToClient, InteractionRules } from '../interaction/interaction-rules.js';
import { returnToApplicationPage } from '../interaction/interaction.pages.js';
import { AuthorizationPageError } from '../oauth.errors.js';
import { AuthenticationRequirement, stepUpLocation } from './authentication-requirement.js';
import { AuthorizationCodesService } from './authorization-codes.service.js';
import {
  AuthorizationRedirectError,
  AuthorizationRequest,
  AuthorizationRequestValidator,
  formActionSource,
  redirectLocation,
} from './authorization-request.js';
import { authorizationErrorPage, consentPage } from './authorize.pages.js';
import { formPostPage, formPostViewOptions } from './form-post.page.js';
import { type ApplicationOwner, profileCsp, toConsentView } from './consent.view.js';
import { UsersService } from '../../users/users.service.js';

/** A hostname safe to name in a Content-Security-Policy source list. */

/**
 * The authorization endpoint's steps (RFC 6749 §4.1, OpenID Connect Core §3.1.2): check the request,
 * sign the user in if needed (prompt, max_age), have them prove a second factor if the client asked for
 * one (acr_values), then the consent (shown, or remembered: InteractionRules) and the code. A visitor
 * who is not signed in is sent to sign in (or, with prompt=none, back to the client with login_required).
 */
@Injectable()
export class AuthorizeEndpoint {
  constructor(
    private readonly validator: AuthorizationRequestValidator,
    private readonly codes: AuthorizationCodesService,
    private readonly interactions: InteractionRules,
    private readonly requirement: AuthenticationRequirement,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly users: UsersService,
  ) {}

  /** The request as sent by the client: the code at once if an earlier approval covers it, else the consent page. */
  authorize(session: SignedInUser | null, params: URLSearchParams): Promise<PageResult> {
    return this.handle(session, params, { enforceReauthentication: true }, async (request, signedIn) => {
      if (await this.interactions.consentRemembered(request, signedIn.user.id)) return this.approve(request, signedIn);
      if (request.prompt.has('none')) {
        return this.errorToClient(request, {
          error: 'consent_required',
          error_description: 'The user has not approved this application for these scopes',
          state: request.state,
        });
      }
      const consent = toConsentView(
        request,
        await this.ownerOf(request.application.ownerId),
        await this.resourceServerOwners(request.resourceServers.map((s) => s.ownerId)),
      );
      return view((c) => consentPage({ consent, user: signedIn.user, csrfToken: c.csrfToken }), {
        // The approval answers with a redirect to the client, which form-action must allow.
        formActions: [formActionSource(request.redirectUri)],
        // The application's logo, from its own origin only.
        ...profileCsp(consent.profile),
      });
    });
  }

  /** An authorization request posted as a form: the same request as a GET (303 See Other). */
  forward(params: URLSearchParams): PageResult {
    return new Redirect(`/oauth/authorize?${params.toString()}`, 303);
  }

  /**
   * The consent form's answer. It answers a request whose sign-in rules (prompt, max_age) were applied
   * when the page was shown; acr_values is checked again, as it cannot ask forever.
   */
  decide(session: SignedInUser | null, params: URLSearchParams, decision: unknown): Promise<PageResult> {
    return this.handle(session, params, { enforceReauthentication: false }, async (request, signedIn) => {
      if (decision === 'approve') {
        await this.interactions.rememberConsent(signedIn.user.id, request);
        return this.approve(request, signedIn);
      }
      if (decision === 'deny') {
        return this.toClient(request, { error: 'access_denied', error_description: 'The user denied the request' });
      }
      return view(() => authorizationErrorPage('The form must say decision=approve or decision=deny.'), { status: 400 });
    });
  }

  /** Who registered the application, as the consent page names them; null for a self-registered one. */
  private async ownerOf(ownerId: string | null): Promise<ApplicationOwner | null> {
    const owner = ownerId ? await this.users.findById(ownerId) : null;
    return owner && { name: owner.name, username: owner.username };
  }

  /** The names of the resource servers' owners, by id, as the consent page names them. */
  private async resourceServerOwners(ownerIds: string[]): Promise<Map<string, string>> {
    if (ownerIds.length === 0) return new Map();
    return new Map((await this.users.findManyByIds([...new Set(ownerIds)])).map((u) => [u.id, u.name]));
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
    const code = await this.codes.issue(request, signedIn.user.id, {
      authTime: signedIn.authTime,
      amr: signedIn.amr,
      sessionId: signedIn.sessionId,
    });
    return this.toClient(request, { code });
  }

  /**
   * An error response the user did not choose (RFC 6749 §4.1.2.1, or prompt=none's answers): back to the
   * client as backToClient decides, a redirect (or form post) or a page with the same answer as a link
   * (or a button).
   */
  private errorToClient(
    request: Pick<AuthorizationRequest, 'application' | 'redirectUri' | 'responseMode'>,
    params: { error: string; error_description: string; state: string | undefined },
    status: 200 | 400 = 200,
  ): PageResult {
    const location = redirectLocation(request.redirectUri, params, this.config.baseUrl);
    const back = backToClient(request.application, request.redirectUri, location);
    if ('redirect' in back) return this.toClient(request, params);
    const page = {
      applicationName: request.application.name,
      destination: back.link.destination,
      heading: HEADINGS[params.error] ?? 'This authorization request is not valid',
      description: params.error_description,
    };
    if (request.responseMode === 'form_post') {
      const fields = this.responseFields(params);
      return view(() => returnToApplicationPage({ ...page, form: { action: request.redirectUri, fields } }), {
        status,
        formActions: [formActionSource(request.redirectUri)],
      });
    }
    return view(() => returnToApplicationPage({ ...page, location: back.link.location }), { status });
  }

  /**
   * Back to the client's redirect URI with the response parameters (and state, iss): a redirect with
   * them in the query, or with response_mode=form_post a page that posts them there.
   */
  private toClient(
    request: Pick<AuthorizationRequest, 'redirectUri' | 'responseMode'> & { state?: string },
    params: Record<string, string | undefined>,
  ): PageResult {
    const all = { ...params, state: 'state' in params ? params.state : request.state };
    if (request.responseMode === 'form_post') {
      const fields = this.responseFields(all);
      return view(() => formPostPage(request.redirectUri, fields), formPostViewOptions(request.redirectUri));
    }
    return new Redirect(redirectLocation(request.redirectUri, all, this.config.baseUrl), 302);
  }

  /** The response's parameters as form fields, with `iss` (RFC 9207) as in a redirect. */
  private responseFields(params: Record<string, string | undefined>): Record<string, string> {
    const fields: Record<string, string> = {};
    for (const [name, value] of Object.entries(params)) if (value !== undefined) fields[name] = value;
    fields.iss = this.config.baseUrl;
    return fields;
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
 * keeping it would ask again forever. `reauth` shows the form even to a signed-in user. An OpenID Connect
 * `login_hint` pre-fills the sign-in form's username field, and does nothing else.
 */
function signInLocation(params: URLSearchParams, reauth: boolean): string {
  const back = new URLSearchParams(params);
  back.delete('max_age');
  const prompt = (back.get('prompt') ?? '').split(' ').filter((p) => p && p !== 'login' && p !== 'select_account');
  if (prompt.length > 0) back.set('prompt', prompt.join(' '));
  else back.delete('prompt');
  const returnTo = `/oauth/authorize?${back.toString()}`;
  const loginHint = params.get('login_hint');
  const hint = loginHint ? `&login_hint=${encodeURIComponent(loginHint)}` : '';
  return `/sign-in?return_to=${encodeURIComponent(returnTo)}${reauth ? '&reauth=1' : ''}${hint}`;
}
