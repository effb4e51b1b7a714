import { Injectable } from '@nestjs/common';
import type { ApplicationEntity } from '../clients/application.entity.js';
import { ApplicationsService } from '../clients/applications.service.js';
import { IdTokenHint, IdTokenService } from '../keys/id-token.service.js';

/** A checked RP-initiated logout request (OpenID Connect RP-Initiated Logout 1.0 §2). */
export interface LogoutRequest {
  /** The relying party, from `client_id` or the hint's `aud`; null when neither names one. */
  application: ApplicationEntity | null;
  /** A verified `id_token_hint` (possibly expired), or null when none was sent. */
  hint: IdTokenHint | null;
  /** Registered for `application`, exactly as given. */
  postLogoutRedirectUri?: string;
  state?: string;
}

/** A logout request that must not send the user anywhere: shown as an error page (400). */
export class LogoutPageError extends Error {
  constructor(readonly description: string) {
    super(description);
    this.name = 'LogoutPageError';
  }
}

/** The parameters this endpoint reads; `ui_locales` and `logout_hint` are accepted and ignored. */
export const LOGOUT_PARAMETERS = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state', 'ui_locales', 'logout_hint'] as const;

/** Longest value of each parameter: well above what a real one needs, low enough to go back into a URL. */
const MAX_LENGTH: Record<(typeof LOGOUT_PARAMETERS)[number], number> = {
  id_token_hint: 4096,
  client_id: 100,
  post_logout_redirect_uri: 2048,
  state: 1024,
  ui_locales: 256,
  logout_hint: 1024,
};

/**
 * The checks of the end-session endpoint, as a list of steps: each parameter at most once and of a sane
 * length; the hint an id_token of ours; the client named by `client_id` and the hint agreeing; the
 * post-logout redirect URI registered for that client. Any failure is a page, never a redirect.
 */
@Injectable()
export class LogoutRequestValidator {
  constructor(
    private readonly applications: ApplicationsService,
    private readonly idTokens: IdTokenService,
  ) {}

  async validate(params: URLSearchParams): Promise<LogoutRequest> {
    this.checkParameters(params);
    const hint = await this.checkHint(params.get('id_token_hint') ?? undefined);
    const application = await this.checkClient(params.get('client_id') ?? undefined, hint);
    const postLogoutRedirectUri = this.checkRedirectUri(params.get('post_logout_redirect_uri') ?? undefined, application);
    return { application, hint, postLogoutRedirectUri, state: params.get('state') ?? undefined };
  }

  private checkParameters(params: URLSearchParams): void {
    for (const name of LOGOUT_PARAMETERS) {
      const values = params.getAll(name);
      if (values.length > 1) throw new LogoutPageError(`The ${name} parameter is given more than once.`);
      if (values[0] !== undefined && values[0].length > MAX_LENGTH[name]) {
        throw new LogoutPageError(`The ${name} parameter is longer than ${MAX_LENGTH[name]} characters.`);
      }
    }
  }

  private async checkHint(token: string | undefined): Promise<IdTokenHint | null> {
    if (token === undefined || token === '') return null;
    const hint = await this.idTokens.readHint(token);
    if (!hint) throw new LogoutPageError('The id_token_hint is not an ID token issued by this server.');
    return hint;
  }

  /** `client_id` if given (and then one of the hint's audiences), else the hint's single audience. */
  private async checkClient(clientId: string | undefined, hint: IdTokenHint | null): Promise<ApplicationEntity | null> {
    if (clientId) {
      if (hint && !hint.aud.includes(clientId)) throw new LogoutPageError('The client_id is not the audience of the id_token_hint.');
      const application = await this.applications.findClient(clientId);
      if (!application) throw new LogoutPageError('No application is registered with this client_id.');
      return application;
    }
    // An application deleted since it got the token is no client any more: the logout can go on without one.
    return hint?.aud.length === 1 ? this.applications.findClient(hint.aud[0]!) : null;
  }

  private checkRedirectUri(uri: string | undefined, application: ApplicationEntity | null): string | undefined {
    if (uri === undefined || uri === '') return undefined;
    if (!application) {
      throw new LogoutPageError('A post_logout_redirect_uri needs the client it is registered for: send client_id or id_token_hint.');
    }
    if (!application.postLogoutRedirectUris.includes(uri)) {
      throw new LogoutPageError('The post_logout_redirect_uri is not registered for this application.');
    }
    return uri;
  }
}

/** Where the user goes after logging out: the registered URI, with `state` when the client sent one. */
export function postLogoutLocation(uri: string, state: string | undefined): string {
  if (state === undefined) return uri;
  const url = new URL(uri);
  url.searchParams.set('state', state);
  return url.toString();
}
