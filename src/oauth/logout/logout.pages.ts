import { html } from '../../web/html.js';
import { page } from '../../web/layout.js';
import { selfRegisteredNotice } from '../interaction/interaction.pages.js';

/** What the confirmation form posts back: the checked request, without the id_token_hint (no longer needed). */
export interface LogoutConfirmation {
  /** The application that asked, when one is known. */
  applicationName?: string;
  /** It registered itself and no user claimed it: its name is whatever its registrant chose. */
  selfRegistered: boolean;
  /** Where the user will be sent once signed out: the host of the post-logout redirect URI. */
  destination?: string;
  parameters: Readonly<Record<string, string | undefined>>;
}

export function logoutConfirmationPage(options: {
  confirmation: LogoutConfirmation;
  user: { username: string; name: string };
  csrfToken: string;
}): string {
  const { confirmation, user, csrfToken } = options;
  return page({
    title: 'Sign out',
    narrow: true,
    user,
    csrfToken,
    body: html`<div class="card">
      <h1>Sign out of Agora?</h1>
      ${confirmation.selfRegistered ? selfRegisteredNotice(confirmation.destination) : ''}
      <p class="lead">
        ${
          confirmation.applicationName
            ? html`<span class="app-name">${confirmation.applicationName}</span> asked you to sign out.`
            : 'An application asked you to sign out.'
        }
        You are signed in as <strong>@${user.username}</strong>.
      </p>
      <form method="post" action="/oauth/logout/confirm">
        <input type="hidden" name="_csrf" value="${csrfToken}" />
        ${Object.entries(confirmation.parameters)
          .filter(([, v]) => v !== undefined)
          .map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
        <div class="actions stretch">
          <a class="button secondary" href="/">Stay signed in</a>
          <button type="submit">Yes, sign out</button>
        </div>
      </form>
      <p class="footnote">
        ${
          confirmation.destination
            ? html`You will then be sent back to <strong>${confirmation.destination}</strong>.`
            : 'This signs you out of Agora in this browser.'
        }
        If you did not expect this, choose Stay signed in.
      </p>
    </div>`,
  });
}

/** `back`: a self-registered application's post-logout URI, offered as a link rather than followed. */
export function signedOutPage(back?: { destination: string; location: string }): string {
  return page({
    title: 'Signed out',
    narrow: true,
    body: html`<div class="card">
      <h1>You are signed out</h1>
      <p class="lead">You are no longer signed in to Agora in this browser.</p>
      ${
        back
          ? html`${selfRegisteredNotice(back.destination)}
              <div class="actions">
                <a class="button" href="${back.location}" rel="noreferrer">Return to ${back.destination}</a>
                <a class="button secondary" href="/sign-in">Sign in again</a>
              </div>`
          : html`<div class="actions"><a class="button" href="/sign-in">Sign in again</a></div>`
      }
    </div>`,
  });
}

export function logoutErrorPage(options: { description: string; user?: { username: string; name: string }; csrfToken: string }): string {
  const { description, user, csrfToken } = options;
  return page({
    title: 'Sign-out request not valid',
    narrow: true,
    user,
    csrfToken,
    body: html`<div class="card">
      <h1>This sign-out request is not valid</h1>
      <div class="alert error" role="alert">${description}</div>
      <p>
        The application that sent you here is misconfigured.
        ${user ? 'You have not been signed out: to sign out of Agora, use Sign out in the menu.' : 'You are not signed in to Agora.'} If you
        develop this application, check its <code>id_token_hint</code>, <code>client_id</code> and
        <code>post_logout_redirect_uri</code> against its registration.
      </p>
    </div>`,
  });
}
