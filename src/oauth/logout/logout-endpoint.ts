import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { SignedInUser } from '../../web/page-sessions.js';
import { WebSession } from '../../sessions/web-session.js';
import type { PageResult } from '../../web/page-result.js';
import { Redirect, view } from '../../web/page-result.js';
import { formActionSource } from '../authorize/authorization-request.js';
import { backToClient, destinationOf, InteractionRules, showsUnverifiedNotice } from '../interaction/interaction-rules.js';
import { LogoutConfirmation, logoutConfirmationPage, logoutErrorPage, signedOutPage } from './logout.pages.js';
import { Subjects } from '../subjects/subjects.js';
import { LogoutPageError, LogoutRequest, LogoutRequestValidator, postLogoutLocation } from './logout-request.js';

const LOGOUT_ENDPOINT = '/oauth/logout';
/** What the form post hands on to the GET: the parameters that decide; ui_locales and logout_hint are ignored. */
const FORWARDED = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state'] as const;

/**
 * OpenID Connect RP-Initiated Logout 1.0: the end-session endpoint's steps. The request is checked
 * (LogoutRequestValidator; any failure is a page); the user is asked to confirm unless a valid
 * id_token_hint names the user signed in in this browser; then the browser goes back to the registered
 * post_logout_redirect_uri (with `state`), or sees that it is signed out.
 */
@Injectable()
export class LogoutEndpoint {
  constructor(
    private readonly validator: LogoutRequestValidator,
    private readonly session: WebSession,
    private readonly interactions: InteractionRules,
    private readonly subjects: Subjects,
  ) {}

  /** The request as the relying party sent the browser (GET). */
  logout(req: FastifyRequest, signedIn: SignedInUser | null, params: URLSearchParams): Promise<PageResult> {
    return this.checked(params, async (request) => {
      if (!signedIn) {
        const uri = request.postLogoutRedirectUri;
        if (!uri) return view(() => signedOutPage());
        const back = backToClient(request.application, uri, postLogoutLocation(uri, request.state));
        if ('redirect' in back) return new Redirect(back.redirect, 302);
        return view(() => signedOutPage(back.link));
      }
      // The hint names the user as its client sees them (a pairwise client: its own sub).
      const subject = request.application ? this.subjects.of(request.application, signedIn.user.id) : signedIn.user.id;
      if (!this.interactions.asksToConfirmSignOut(request.hint, subject)) return this.signOut(req, request, 302);
      return view(
        (c) => logoutConfirmationPage({ confirmation: toConfirmation(request), user: signedIn.user, csrfToken: c.csrfToken }),
        // The confirmation answers with a redirect to the client, which form-action must allow.
        { formActions: request.postLogoutRedirectUri ? [formActionSource(request.postLogoutRedirectUri)] : [] },
      );
    });
  }

  /**
   * The same request as a form post from the relying party's page. Posted from another site, it carries
   * no session cookie (SameSite=Lax), so it cannot decide anything: once checked, it goes on as the GET,
   * which a top-level navigation sends with the cookie.
   */
  forward(params: URLSearchParams | null): Promise<PageResult> {
    if (!params) return Promise.resolve(logoutErrorView('Every parameter must be given as text.'));
    return this.checked(params, () => {
      const forward = new URLSearchParams();
      for (const name of FORWARDED) {
        const value = params.get(name);
        if (value) forward.set(name, value);
      }
      return Promise.resolve(new Redirect(forward.size ? `${LOGOUT_ENDPOINT}?${forward.toString()}` : LOGOUT_ENDPOINT, 303));
    });
  }

  /** The confirmation page's answer. */
  confirm(req: FastifyRequest, params: URLSearchParams | null): Promise<PageResult> {
    if (!params) return Promise.resolve(logoutErrorView('Every parameter must be given as text.'));
    params.delete('_csrf');
    return this.checked(params, (request) => this.signOut(req, request, 303));
  }

  private async checked(params: URLSearchParams, next: (request: LogoutRequest) => Promise<PageResult>): Promise<PageResult> {
    let request: LogoutRequest;
    try {
      request = await this.validator.validate(params);
    } catch (err) {
      if (err instanceof LogoutPageError) return logoutErrorView(err.description);
      throw err;
    }
    return next(request);
  }

  /**
   * Ends this browser's session, then back to the client, or to this endpoint, which says the browser is
   * signed out. Without a confirmation (302), the way back to the client is as backToClient decides: for
   * a link, the endpoint, now for a signed-out browser, shows it.
   */
  private async signOut(req: FastifyRequest, request: LogoutRequest, status: 302 | 303): Promise<Redirect> {
    const cookies = await this.session.signOut(req);
    const uri = request.postLogoutRedirectUri;
    let location = uri ? postLogoutLocation(uri, request.state) : LOGOUT_ENDPOINT;
    if (uri && status === 302 && request.application && 'link' in backToClient(request.application, uri, location)) {
      const back = new URLSearchParams({ client_id: request.application.clientId, post_logout_redirect_uri: uri });
      if (request.state !== undefined) back.set('state', request.state);
      location = `${LOGOUT_ENDPOINT}?${back.toString()}`;
    }
    return new Redirect(location, status, { cookies });
  }
}

function logoutErrorView(description: string) {
  return view((c) => logoutErrorPage({ description, user: c.signedIn?.user, csrfToken: c.csrfToken }), { status: 400 });
}

function toConfirmation(request: LogoutRequest): LogoutConfirmation {
  return {
    applicationName: request.application?.name,
    selfRegistered: showsUnverifiedNotice(request.application),
    destination: request.postLogoutRedirectUri ? destinationOf(request.postLogoutRedirectUri) : undefined,
    parameters: {
      client_id: request.application?.clientId,
      post_logout_redirect_uri: request.postLogoutRedirectUri,
      state: request.state,
    },
  };
}
