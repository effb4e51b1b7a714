import { Body, Controller, Get, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { SignedInUser } from '../sessions/sessions.service.js';
import { WebSession } from '../sessions/web-session.js';
import type { PageResult } from '../web/page-result.js';
import { Redirect, view } from '../web/page-result.js';
import { AnonymousPage, CrossSiteForm, CurrentSession, Pages } from '../web/pages.decorator.js';
import { isSelfRegistered } from './application.model.js';
import { formActionSource } from './authorization-request.js';
import { destinationOf } from './consent.view.js';
import { LogoutPageError, LogoutRequest, LogoutRequestValidator, postLogoutLocation } from './logout-request.js';
import { logoutConfirmationPage, logoutErrorPage, signedOutPage } from './logout.pages.js';

const ENDPOINT = '/oauth/logout';
/** What the form post hands on to the GET: the parameters that decide; ui_locales and logout_hint are ignored. */
const FORWARDED = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state'] as const;

/**
 * OpenID Connect RP-Initiated Logout 1.0: the end-session endpoint. A relying party sends the browser here
 * (GET, or a form POST) to end the user's Agora session. The user is asked to confirm unless a valid
 * id_token_hint names the user signed in in this browser; then the browser goes back to the registered
 * post_logout_redirect_uri (with `state`), or sees that it is signed out.
 */
@Controller('oauth/logout')
@Pages()
@AnonymousPage()
export class LogoutController {
  constructor(
    private readonly validator: LogoutRequestValidator,
    private readonly session: WebSession,
  ) {}

  @Get()
  async logout(@Req() req: FastifyRequest, @CurrentSession() signedIn: SignedInUser | null): Promise<PageResult> {
    const params = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
    return this.checked(params, async (request) => {
      if (!signedIn) {
        const uri = request.postLogoutRedirectUri;
        if (!uri) return view(() => signedOutPage());
        const location = postLogoutLocation(uri, request.state);
        // A self-registered application's registrant chose that URI: a link under where it goes, never
        // a redirect anyone could send anyone through.
        if (request.application && isSelfRegistered(request.application)) {
          return view(() => signedOutPage({ destination: destinationOf(uri), location }));
        }
        return new Redirect(location, 302);
      }
      if (request.hint?.sub === signedIn.user.id) return this.signOut(req, request, 302);
      return view(
        (c) => logoutConfirmationPage({ confirmation: toConfirmation(request), user: signedIn.user, csrfToken: c.csrfToken }),
        // The confirmation answers with a redirect to the client, which form-action must allow.
        { formActions: request.postLogoutRedirectUri ? [formActionSource(request.postLogoutRedirectUri)] : [] },
      );
    });
  }

  /**
   * The same request as a form post from the relying party's page. Posted from another site, it carries
   * no session cookie (SameSite=Lax), so it cannot decide anything: once checked, it goes on as the GET
   * above, which a top-level navigation sends with the cookie.
   */
  @Post()
  @CrossSiteForm()
  async logoutForm(@Body() body: unknown): Promise<PageResult> {
    const params = formParameters(body);
    if (!params) return errorView('Every parameter must be given as text.');
    return this.checked(params, () => {
      const forward = new URLSearchParams();
      for (const name of FORWARDED) {
        const value = params.get(name);
        if (value) forward.set(name, value);
      }
      return Promise.resolve(new Redirect(forward.size ? `${ENDPOINT}?${forward.toString()}` : ENDPOINT, 303));
    });
  }

  /** The confirmation page's form (CSRF-checked like every form of ours). */
  @Post('confirm')
  async confirm(@Req() req: FastifyRequest, @Body() body: unknown): Promise<PageResult> {
    const params = formParameters(body);
    if (!params) return errorView('Every parameter must be given as text.');
    params.delete('_csrf');
    return this.checked(params, (request) => this.signOut(req, request, 303));
  }

  private async checked(params: URLSearchParams, next: (request: LogoutRequest) => Promise<PageResult>): Promise<PageResult> {
    let request: LogoutRequest;
    try {
      request = await this.validator.validate(params);
    } catch (err) {
      if (err instanceof LogoutPageError) return errorView(err.description);
      throw err;
    }
    return next(request);
  }

  /**
   * Ends this browser's session, then back to the client, or to this endpoint, which says the browser is
   * signed out. Without a confirmation, a self-registered application is not redirected to either: the
   * endpoint, now for a signed-out browser, shows the way back as a link.
   */
  private async signOut(req: FastifyRequest, request: LogoutRequest, status: 302 | 303): Promise<Redirect> {
    const cookies = await this.session.signOut(req);
    const uri = request.postLogoutRedirectUri;
    let location = uri ? postLogoutLocation(uri, request.state) : ENDPOINT;
    if (uri && status === 302 && request.application && isSelfRegistered(request.application)) {
      const back = new URLSearchParams({ client_id: request.application.clientId, post_logout_redirect_uri: uri });
      if (request.state !== undefined) back.set('state', request.state);
      location = `${ENDPOINT}?${back.toString()}`;
    }
    return new Redirect(location, status, { cookies });
  }
}

function errorView(description: string) {
  return view((c) => logoutErrorPage({ description, user: c.signedIn?.user, csrfToken: c.csrfToken }), { status: 400 });
}

/** A posted form as parameters (a field given twice stays twice, for the validator to refuse); null if a value is not text. */
function formParameters(body: unknown): URLSearchParams | null {
  const params = new URLSearchParams();
  if (body === undefined || body === null) return params;
  if (typeof body !== 'object' || Array.isArray(body)) return null;
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v !== 'string') return null;
      params.append(name, v);
    }
  }
  return params;
}

function toConfirmation(request: LogoutRequest) {
  return {
    applicationName: request.application?.name,
    selfRegistered: request.application ? isSelfRegistered(request.application) : false,
    destination: request.postLogoutRedirectUri ? destinationOf(request.postLogoutRedirectUri) : undefined,
    parameters: {
      client_id: request.application?.clientId,
      post_logout_redirect_uri: request.postLogoutRedirectUri,
      state: request.state,
    },
  };
}
