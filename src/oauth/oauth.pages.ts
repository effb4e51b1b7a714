import { SCOPES, ScopeName } from '../auth/scopes.js';
import { html } from '../web/html.js';
import { page } from '../web/layout.js';
import type { ConsentView } from './consent.view.js';

export function consentPage(options: { consent: ConsentView; user: { username: string; name: string }; csrfToken: string }): string {
  const { consent, user, csrfToken } = options;
  return page({
    title: `Authorize ${consent.applicationName}`,
    narrow: true,
    user,
    csrfToken,
    body: html`<div class="card">
      <h1>Authorize <span class="app-name">${consent.applicationName}</span></h1>
      ${consent.selfRegistered ? selfRegisteredNotice(consent.destination) : ''}
      <p class="lead">${consent.applicationName} wants to use your Agora account, <strong>@${user.username}</strong>.</p>
      <p>It will be able to:</p>
      <ul class="scopes">
        ${consent.scopes.map((s) => html`<li>${SCOPES[s as ScopeName]}<code>${s}</code></li>`)}
      </ul>
      <form method="post" action="/oauth/authorize">
        <input type="hidden" name="_csrf" value="${csrfToken}" />
        ${Object.entries(consent.parameters)
          .filter(([, v]) => v !== undefined)
          .map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
        <div class="actions stretch">
          <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
          <button type="submit" name="decision" value="approve">Authorize</button>
        </div>
      </form>
      <p class="footnote">
        You will be sent back to <strong>${consent.destination}</strong>. You can revoke this access at any time from your account.
      </p>
    </div>`,
  });
}

/**
 * Shown on every page of an application that registered itself: nobody at Agora vouches for its name,
 * so the user should judge it by where it sends them.
 */
export function selfRegisteredNotice(destination: string | undefined) {
  return html`<div class="alert warn" role="note">
    <strong>Not verified by Agora.</strong> This application registered itself: no Agora account answers for it, and its name was chosen by
    whoever registered it.
    ${destination ? html`Continue only if you trust <strong>${destination}</strong>.` : 'Continue only if you trust it.'}
  </div>`;
}

/**
 * Instead of an automatic redirect to a self-registered application (an error the user did not cause):
 * the answer for the application, as a link the user can follow once they have seen where it goes.
 */
export function returnToApplicationPage(options: {
  applicationName: string;
  destination: string;
  location: string;
  heading: string;
  description: string;
}): string {
  const { applicationName, destination, location, heading, description } = options;
  return page({
    title: heading,
    narrow: true,
    body: html`<div class="card">
      <h1>${heading}</h1>
      <p class="lead"><span class="app-name">${applicationName}</span> sent you here and is waiting for an answer.</p>
      <div class="alert error" role="alert">${description}</div>
      ${selfRegisteredNotice(destination)}
      <div class="actions"><a class="button" href="${location}" rel="noreferrer">Return to ${destination}</a></div>
      <p class="footnote">Nothing was shared with the application. The link tells it what happened.</p>
    </div>`,
  });
}

export function authorizationErrorPage(description: string): string {
  return page({
    title: 'Authorization failed',
    narrow: true,
    body: html`<div class="card">
      <h1>This authorization request is not valid</h1>
      <div class="alert error" role="alert">${description}</div>
      <p>
        The application that sent you here is misconfigured. You have not been signed in to it and nothing was shared. If you develop this
        application, check its <code>client_id</code> and <code>redirect_uri</code> against its registration.
      </p>
    </div>`,
  });
}
