import { SCOPES, ScopeName } from '../../auth/scopes.js';
import { html } from '../../web/html.js';
import { page } from '../../web/layout.js';
import { selfRegisteredNotice } from '../interaction/interaction.pages.js';
import type { ApplicationProfile, ConsentView } from './consent.view.js';

export function consentPage(options: { consent: ConsentView; user: { username: string; name: string }; csrfToken: string }): string {
  const { consent, user, csrfToken } = options;
  return page({
    title: `Authorize ${consent.applicationName}`,
    narrow: true,
    user,
    csrfToken,
    body: html`<div class="card">
      ${applicationHeading({ verb: 'Authorize', applicationName: consent.applicationName, profile: consent.profile })}
      ${consent.selfRegistered ? selfRegisteredNotice(consent.destination) : ''}
      <p class="lead">${consent.applicationName} wants to use your Agora account, <strong>@${user.username}</strong>.</p>
      <p>It will be able to:</p>
      <ul class="scopes">
        ${consent.scopes.map((s) => html`<li>${SCOPES[s as ScopeName]}<code>${s}</code></li>`)}
      </ul>
      ${resourceServersSection(consent)}
      <form method="post" action="/oauth/authorize">
        <input type="hidden" name="_csrf" value="${csrfToken}" />
        ${Object.entries(consent.parameters)
          .filter(([, v]) => v !== undefined)
          .map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
        ${consent.resources.map((value) => html`<input type="hidden" name="resource" value="${value}" />`)}
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
 * Where the access token will be used besides Agora (RFC 8707 resource servers): each one's name, its
 * identifier and who registered it, so the user knows who will receive the token.
 */
export function resourceServersSection(consent: Pick<ConsentView, 'resourceServers'>) {
  if (consent.resourceServers.length === 0) return null;
  return html`<p>The access will be used at:</p>
    <ul class="scopes resource-servers">
      ${consent.resourceServers.map(
        (s) =>
          html`<li>
            <strong>${s.name}</strong>${s.owner ? html` (registered by ${s.owner})` : null}<code class="url">${s.identifier}</code>
          </li>`,
      )}
    </ul>`;
}

/**
 * The application as its owner describes it, on the consent page and the device flow's: logo (fixed
 * size, loaded without a referrer so the page's URL never reaches the image's host), the heading with
 * its name, owner, description and homepage; text escaped.
 */
export function applicationHeading(o: { verb: 'Authorize' | 'Connect'; applicationName: string; profile: ApplicationProfile }) {
  const { logo, owner, description, homepage } = o.profile;
  return html`<div class="app-profile">
      ${logo ? logoBox(logo, o.applicationName) : null}
      <div>
        <h1>${o.verb} <span class="app-name">${o.applicationName}</span></h1>
        ${owner ? html`<p class="app-owner">by ${owner.name} (@${owner.username})</p>` : null}
      </div>
    </div>
    ${description ? html`<p class="app-description">${description}</p>` : null}
    ${
      homepage
        ? html`<p class="app-homepage">
            <a href="${homepage}" target="_blank" rel="noopener noreferrer">${homepage}</a>
          </p>`
        : null
    }`;
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

/** The logo in its box, the application's initial behind it (assets/app.css: no broken-image icon). */
function logoBox(logo: string, applicationName: string) {
  const initial = initialOf(applicationName);
  // prettier-ignore
  return html`<span class="app-logo-box" aria-hidden="true">${initial}<img class="app-logo" src="${logo}" width="48" height="48" alt="" referrerpolicy="no-referrer" decoding="async" data-initial="${initial}" /></span>`;
}

/** The first letter of the application's name (a whole character, not half of a surrogate pair), shown while its logo is missing. */
function initialOf(name: string): string {
  return (Array.from(name.trim())[0] ?? '?').toUpperCase();
}
