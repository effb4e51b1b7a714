import { describeBrowser } from '../sessions/browser-description.js';
import type { ActiveSession } from '../sessions/sessions.service.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { html } from '../web/html.js';
import { confirmationPage, fieldError, page } from '../web/layout.js';
import { PASSWORD_MIN_LENGTH } from '../users/user-validation.js';
import type { SecondFactorMethods, SecondFactorRequirement } from '../users/second-factors.js';
import { secondFactorRequiredNotice, twoFactorSection } from './two-factor.section.js';
import type { Passkey } from '../passkeys/passkey.model.js';
import { passkeysSection } from './passkeys.section.js';
import { emailSection } from './email.section.js';

export interface SecurityPageOptions {
  signedIn: SignedInUser;
  csrfToken: string;
  sessions: ActiveSession[];
  notice?: string;
  /** Errors of the password form, per field. */
  passwordErrors?: Record<string, string>;
  /** Errors and typed value of the e-mail form. */
  emailErrors?: Record<string, string>;
  email?: string;
  /** The second factors set up (the Two-factor authentication section). */
  twoFactor: SecondFactorMethods;
  /** The user's passkeys (the "Passkeys" section). */
  passkeys?: Passkey[];
  /** A change of address waiting for its link. */
  pendingEmail?: { email: string; expiresAt: Date } | null;
  /** Organizers requiring a second factor the user does not have yet. */
  secondFactorRequired?: readonly SecondFactorRequirement[];
}

function passwordInput(id: string, name: string, label: string, autocomplete: string, error?: string, hint?: string) {
  return html`<label for="${id}">${label}</label>
    <input
      id="${id}"
      name="${name}"
      type="password"
      autocomplete="${autocomplete}"
      required
      aria-invalid="${error ? 'true' : 'false'}"
      ${hint ? html`aria-describedby="${id}-hint"` : ''}
    />
    ${hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : null} ${fieldError(error, id)}`;
}

/** A time as the security page shows it: `2026-11-26 09:15 UTC`. */
export const when = (date: Date) => new Date(date).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';

export function securityPage(o: SecurityPageOptions): string {
  const pe = o.passwordErrors ?? {};
  return page({
    title: 'Security',
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'security',
    notice: o.notice,
    body: html` <h1>Security</h1>
      <p class="lead">Your password, your e-mail address, two-factor authentication, and where you are signed in.</p>
      ${secondFactorRequiredNotice(o.secondFactorRequired ?? [])}

      <h2 class="section" id="password">Change password</h2>
      <div class="card">
        <form method="post" action="/account/password" novalidate>
          <input type="hidden" name="_csrf" value="${o.csrfToken}" />
          ${passwordInput('current-password', 'current_password', 'Current password', 'current-password', pe.currentPassword)}
          ${passwordInput(
            'new-password',
            'new_password',
            'New password',
            'new-password',
            pe.newPassword,
            `At least ${PASSWORD_MIN_LENGTH} characters. Your other browsers are signed out.`,
          )}
          <div class="actions"><button type="submit">Change password</button></div>
        </form>
      </div>

      ${emailSection(o)} ${twoFactorSection(o.twoFactor, o.csrfToken)} ${passkeysSection(o.passkeys)}

      <h2 class="section" id="sessions">Where you are signed in</h2>
      <table class="stack">
        <thead>
          <tr>
            <th scope="col">Browser</th>
            <th scope="col">Signed in</th>
            <th scope="col">Last active</th>
            <th scope="col"><span class="muted">Action</span></th>
          </tr>
        </thead>
        <tbody>
          ${o.sessions.map(
            (s) =>
              html`<tr>
                <td class="row-title" data-label="Browser">
                  ${describeBrowser(s.userAgent)} ${s.id === o.signedIn.sessionId ? html`<span class="tag">this browser</span>` : null}
                </td>
                <td class="date" data-label="Signed in">${when(s.signedInAt)}</td>
                <td class="date" data-label="Last active">${when(s.lastSeenAt)}</td>
                <td class="row-action">
                  ${
                    s.id === o.signedIn.sessionId
                      ? null
                      : html`<form method="post" action="/account/sessions/${s.id}/sign-out">
                          <input type="hidden" name="_csrf" value="${o.csrfToken}" />
                          <button
                            type="submit"
                            class="secondary"
                            aria-label="Sign out ${describeBrowser(s.userAgent)}, signed in ${when(s.signedInAt)}"
                          >
                            Sign out
                          </button>
                        </form>`
                  }
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
      <div class="actions">
        <a class="button danger" href="/account/sessions/sign-out-everywhere">Sign out everywhere…</a>
      </div>`,
  });
}

export function confirmSignOutEverywherePage(o: { signedIn: SignedInUser; csrfToken: string; count: number }): string {
  const ending = o.count === 1 ? 'Your one session ends' : `All ${o.count} of your sessions end`;
  return confirmationPage({
    title: 'Sign out everywhere',
    heading: 'Sign out everywhere?',
    consequences: `${ending}, this browser's included: you will need to sign in again. Personal access tokens and applications you authorized keep working.`,
    action: '/account/sessions/sign-out-everywhere',
    button: 'Sign out everywhere',
    cancelHref: '/account/security#sessions',
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'security',
  });
}
