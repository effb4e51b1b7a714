import type { SignedInUser } from '../web/page-sessions.js';
import type { TotpEnrolment } from '../two-factor/totp.service.js';
import { html } from '../web/html.js';
import { fieldError, page } from '../web/layout.js';

interface Signed {
  signedIn: SignedInUser;
  csrfToken: string;
}

function passwordField(error?: string, autofocus = true) {
  return html`<label for="current-password">Current password</label>
    <input
      id="current-password"
      name="current_password"
      type="password"
      autocomplete="current-password"
      required
      ${autofocus ? html`autofocus` : ''}
      aria-invalid="${error ? 'true' : 'false'}"
    />
    ${fieldError(error, 'current-password')}`;
}

/** The secret in groups of four, as authenticator apps show and accept it. */
const grouped = (secret: string) => secret.replace(/(.{4})(?=.)/g, '$1 ');

/**
 * Setting up the authenticator app: the QR code, the secret to type by hand, and the code that confirms
 * it with the current password.
 */
export function totpEnrolmentPage(o: Signed & { enrolment: TotpEnrolment; errors?: { code?: string; currentPassword?: string } }): string {
  const errors = o.errors ?? {};
  return page({
    title: 'Set up authenticator app',
    narrow: true,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'security',
    body: html`<div class="card">
      <h1>Set up your authenticator app</h1>
      <ol class="steps">
        <li>
          Scan this QR code with your authenticator app.
          <img class="qr" src="${o.enrolment.qrCode}" width="200" height="200" alt="QR code to add Agora to an authenticator app" />
        </li>
        <li>
          Or, if you cannot scan it, enter this key in the app (time-based, 6 digits):
          <div class="secret-box">
            <code id="totp-secret" class="secret">${grouped(o.enrolment.secret)}</code
            ><button type="button" class="secondary" data-copy="totp-secret" hidden>Copy</button>
          </div>
        </li>
        <li>
          <form method="post" action="/account/two-factor/totp" novalidate>
            <input type="hidden" name="_csrf" value="${o.csrfToken}" />
            <label for="code">Enter the 6-digit code the app shows</label>
            <input
              id="code"
              name="code"
              type="text"
              inputmode="numeric"
              autocomplete="one-time-code"
              pattern="[0-9 ]*"
              maxlength="7"
              required
              aria-invalid="${errors.code ? 'true' : 'false'}"
            />
            ${fieldError(errors.code, 'code')} ${passwordField(errors.currentPassword, false)}
            <div class="actions stretch">
              <a class="button secondary" href="/account/security#two-factor">Cancel</a>
              <button type="submit">Turn on</button>
            </div>
          </form>
        </li>
      </ol>
    </div>`,
  });
}

/**
 * The recovery codes: the new ones, shown this once (they came through the one-time flash), or the
 * count left and the form that makes new ones.
 */
export function recoveryCodesPage(o: Signed & { codes: string[] | null; left: number; notice?: string; error?: string }): string {
  const text = o.codes ? `Agora recovery codes for @${o.signedIn.user.username}\n\n${o.codes.join('\n')}\n` : '';
  return page({
    title: 'Recovery codes',
    narrow: true,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'security',
    notice: o.notice,
    body: o.codes
      ? html`<div class="card">
          <h1>Save your recovery codes</h1>
          <p>
            If you lose your phone or your passkeys, each of these codes signs you in once. Keep them somewhere safe, such as your password
            manager. <strong>They will not be shown again.</strong>
          </p>
          <ul class="recovery-codes" id="recovery-codes">
            ${o.codes.map((code) => html`<li><code>${code}</code></li>`)}
          </ul>
          <div class="actions stretch">
            <a class="button secondary" download="agora-recovery-codes.txt" href="data:text/plain;charset=utf-8,${encodeURIComponent(text)}"
              >Download</a
            ><button type="button" class="secondary" data-copy="recovery-codes" hidden>Copy</button>
            <a class="button" href="/account/security#two-factor">I have saved them</a>
          </div>
        </div>`
      : html`<div class="card">
          <h1>Recovery codes</h1>
          <p>
            ${o.left === 0 ? 'You have no recovery codes left.' : `You have ${o.left} of 10 recovery codes left.`} New codes replace all of
            them: the old ones stop working.
          </p>
          <form method="post" action="/account/two-factor/recovery-codes" novalidate>
            <input type="hidden" name="_csrf" value="${o.csrfToken}" />
            ${passwordField(o.error)}
            <div class="actions stretch">
              <a class="button secondary" href="/account/security#two-factor">Cancel</a>
              <button type="submit">Make new codes</button>
            </div>
          </form>
        </div>`,
  });
}

/** Turning the authenticator app off: what happens, and the password that confirms it. */
export function disableTotpPage(o: Signed & { lastFactor: boolean; error?: string }): string {
  return page({
    title: 'Turn off two-factor authentication',
    narrow: true,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'security',
    body: html`<div class="card">
      <h1>Turn off the authenticator app?</h1>
      <p>
        Signing in will no longer ask for a code from your app.
        ${
          o.lastFactor
            ? 'It is your only second factor: your password alone will protect your account, and your recovery codes will be deleted.'
            : 'Your passkeys and recovery codes stay.'
        }
      </p>
      <form method="post" action="/account/two-factor/disable" novalidate>
        <input type="hidden" name="_csrf" value="${o.csrfToken}" />
        ${passwordField(o.error)}
        <div class="actions stretch">
          <a class="button secondary" href="/account/security#two-factor">Cancel</a>
          <button type="submit" class="danger">Turn off</button>
        </div>
      </form>
    </div>`,
  });
}
