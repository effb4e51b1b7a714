import { SCOPES, ScopeName } from '../../auth/scopes.js';
import { html } from '../../web/html.js';
import { page } from '../../web/layout.js';
import { selfRegisteredNotice } from '../interaction/interaction.pages.js';
import { applicationHeading, resourceServersSection } from '../authorize/authorize.pages.js';
import type { ApplicationProfile, ConsentResourceServer } from '../authorize/consent.view.js';

type SignedInUser = { username: string; name: string };

/**
 * Where the user types the code their device shows (RFC 8628 §3.3), or confirms the one a link filled in
 * (`prefilled`, §3.3.1): posted with the form's CSRF token, so only the user's own submissions are looked up.
 */
export function deviceCodePage(o: {
  user: SignedInUser;
  csrfToken: string;
  userCode?: string;
  prefilled?: boolean;
  error?: string;
  notice?: string;
}): string {
  return page({
    title: 'Connect a device',
    narrow: true,
    user: o.user,
    csrfToken: o.csrfToken,
    notice: o.notice,
    body: html`<div class="card">
      <h1>Connect a device</h1>
      <p class="lead">
        Enter the code shown by the device or command-line tool you want to sign in to Agora as <strong>@${o.user.username}</strong>.
      </p>
      ${o.error ? html`<div class="alert error" role="alert">${o.error}</div>` : null}
      ${
        o.prefilled
          ? html`<div class="alert warn" role="note">
              A link filled in this code. Continue only if it is the code your device shows right now.
            </div>`
          : null
      }
      <form method="post" action="/oauth/device" novalidate>
        <input type="hidden" name="_csrf" value="${o.csrfToken}" />
        <label for="user_code">Code</label>
        <input
          id="user_code"
          name="user_code"
          type="text"
          class="user-code"
          inputmode="text"
          autocomplete="off"
          autocapitalize="characters"
          spellcheck="false"
          placeholder="XXXX-XXXX"
          maxlength="20"
          required
          autofocus
          value="${o.userCode ?? ''}"
          ${o.error ? html`aria-invalid="true"` : ''}
        />
        <p class="hint">8 letters, like <code>BCDF-GHJK</code>. Upper or lower case, with or without the dash.</p>
        <div class="actions stretch"><button type="submit">Continue</button></div>
      </form>
      <p class="footnote">Only enter a code that a device of yours is showing you right now. Never enter a code someone sent you.</p>
    </div>`,
  });
}

/** The consent screen for a device authorization: the application, the scopes, and a warning. */
export function deviceConsentPage(o: {
  user: SignedInUser;
  csrfToken: string;
  applicationName: string;
  /** Registered by itself and claimed by no user: its name is whatever its registrant chose. */
  selfRegistered: boolean;
  profile: ApplicationProfile;
  scopes: readonly string[];
  resourceServers: readonly ConsentResourceServer[];
  userCode: string;
}): string {
  return page({
    title: `Connect ${o.applicationName}`,
    narrow: true,
    user: o.user,
    csrfToken: o.csrfToken,
    body: html`<div class="card">
      ${applicationHeading({ verb: 'Connect', applicationName: o.applicationName, profile: o.profile })}
      ${o.selfRegistered ? selfRegisteredNotice(undefined) : ''}
      <p class="lead">A device wants to use your Agora account, <strong>@${o.user.username}</strong>, as ${o.applicationName}.</p>
      <div class="alert warn" role="note">
        Approve only if you started this yourself, on your own device, and it shows the code
        <strong class="user-code-shown">${o.userCode}</strong>. If someone sent you this code or link, choose Deny: approving would give
        them access to your account.
      </div>
      <p>It will be able to:</p>
      <ul class="scopes">
        ${o.scopes.map((s) => html`<li>${SCOPES[s as ScopeName]}<code>${s}</code></li>`)}
      </ul>
      ${resourceServersSection(o)}
      <form method="post" action="/oauth/device">
        <input type="hidden" name="_csrf" value="${o.csrfToken}" />
        <input type="hidden" name="user_code" value="${o.userCode}" />
        <div class="actions stretch">
          <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
          <button type="submit" name="decision" value="approve">Approve</button>
        </div>
      </form>
      <p class="footnote">You can revoke this access at any time from your account, under Authorized apps.</p>
    </div>`,
  });
}
