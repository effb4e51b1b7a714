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
