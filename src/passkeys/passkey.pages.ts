import type { SignedInUser } from '../web/page-sessions.js';
import { html, SafeHtml } from '../web/html.js';
import { fieldError, page } from '../web/layout.js';
import type { Passkey } from './passkey.model.js';
import { PASSKEY_NAME_MAX } from './passkeys.service.js';

/** The browser script of every passkey form (assets/passkeys.js): no inline script, the CSP forbids it. */
const SCRIPT = html`<script src="/assets/passkeys.js" defer></script>`;

/** Shown until the script finds the browser can do passkeys (and left shown when it cannot). */
const UNSUPPORTED = html`<p class="hint" data-passkey-unsupported>Passkeys need a browser that supports them, with JavaScript on.</p>`;

/** Where the script says what went wrong in the browser (cancelled, timed out, no passkey). */
const BROWSER_ERROR = html`<p class="field-error" data-passkey-error role="alert" hidden></p>`;

/**
 * The sign-in page's passkey form: a button, and the login field's autofill where the browser offers
 * passkeys there (conditional mediation). The script fills `credential` with `credential.toJSON()` and
 * posts the form like any other.
 */
export function passkeySignInForm(o: { csrfToken: string; returnTo: string; options: string }): SafeHtml {
  return html`<form method="post" action="/sign-in/passkey" class="passkey-form" data-passkey="sign-in" data-options="${o.options}">
      <input type="hidden" name="_csrf" value="${o.csrfToken}" />
      <input type="hidden" name="return_to" value="${o.returnTo}" />
      <input type="hidden" name="credential" value="" />
      <p class="divider"><span>or</span></p>
      ${BROWSER_ERROR}
      <div class="actions stretch">
        <button type="submit" class="secondary" data-passkey-start disabled>Sign in with a passkey</button>
      </div>
      ${UNSUPPORTED}
    </form>
    ${SCRIPT}`;
}

/** "Use a passkey" on the second step of a sign-in: the pending user's passkeys only. */
export function passkeySecondFactorForm(o: { csrfToken: string; options: string; primary: boolean }): SafeHtml {
  return html`<form
      method="post"
      action="/sign-in/second-factor/passkey"
      class="passkey-form"
      data-passkey="second-factor"
      data-options="${o.options}"
    >
      <input type="hidden" name="_csrf" value="${o.csrfToken}" />
      <input type="hidden" name="credential" value="" />
      ${BROWSER_ERROR}
      <div class="actions stretch">
        <button type="submit" class="${o.primary ? '' : 'secondary'}" data-passkey-start disabled>Use a passkey</button>
      </div>
      ${UNSUPPORTED}
    </form>
    ${SCRIPT}`;
}

export function addPasskeyPage(o: {
  signedIn: SignedInUser;
  csrfToken: string;
  /** null: no passkey can be added (the error says why). */
  options: string | null;
  name?: string;
  errors?: Record<string, string>;
}): string {
  const errors = o.errors ?? {};
  return page({
    title: 'Add a passkey',
    narrow: true,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'security',
    body: html`<div class="card">
        <h1>Add a passkey</h1>
        <p class="lead">
          A passkey signs you in with your device's screen lock, fingerprint or face, or a security key, without your password. It also
          counts as a second factor.
        </p>
        ${errors.form ? html`<div class="alert error" role="alert">${errors.form}</div>` : null}
        ${
          o.options === null
            ? html`<div class="actions"><a class="button secondary" href="/account/security#passkeys">Back to security</a></div>`
            : html`<form method="post" action="/account/passkeys" data-passkey="registration" data-options="${o.options}" novalidate>
                <input type="hidden" name="_csrf" value="${o.csrfToken}" />
                <input type="hidden" name="credential" value="" />
                <label for="passkey-name">Name <span class="muted">(optional)</span></label>
                <input
                  id="passkey-name"
                  name="name"
                  type="text"
                  maxlength="${PASSKEY_NAME_MAX}"
                  autocomplete="off"
                  value="${o.name ?? ''}"
                  aria-invalid="${errors.name ? 'true' : 'false'}"
                  aria-describedby="passkey-name-hint"
                />
                <p class="hint" id="passkey-name-hint">Such as "Work laptop" or "YubiKey", to tell your passkeys apart.</p>
                ${fieldError(errors.name, 'passkey-name')} ${BROWSER_ERROR}
                <div class="actions stretch">
                  <a class="button secondary" href="/account/security#passkeys">Cancel</a>
                  <button type="submit" data-passkey-start disabled>Create passkey</button>
                </div>
                ${UNSUPPORTED}
              </form>`
        }
      </div>
      ${SCRIPT}`,
  });
}

/** GitHub's "sudo mode": a session not signed in recently confirms the password before changing passkeys. */
export function confirmPasswordPage(o: {
  signedIn: SignedInUser;
  csrfToken: string;
  returnTo: string;
  error?: string;
  status?: number;
}): string {
  return page({
    title: 'Confirm your password',
    narrow: true,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'security',
    body: html`<div class="card">
      <h1>Confirm your password</h1>
      <p class="lead">You are changing how you sign in. You signed in a while ago: type your password to continue.</p>
      <form method="post" action="/account/passkeys/confirm-password" novalidate>
        <input type="hidden" name="_csrf" value="${o.csrfToken}" />
        <input type="hidden" name="return_to" value="${o.returnTo}" />
        <input type="text" name="username" autocomplete="username" value="${o.signedIn.user.username}" hidden />
        <label for="confirm-password">Password</label>
        <input
          id="confirm-password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
          autofocus
          aria-invalid="${o.error ? 'true' : 'false'}"
        />
        ${fieldError(o.error, 'confirm-password')}
        <div class="actions stretch">
          <a class="button secondary" href="/account/security#passkeys">Cancel</a>
          <button type="submit">Confirm password</button>
        </div>
      </form>
    </div>`,
  });
}

export function renamePasskeyPage(o: {
  signedIn: SignedInUser;
  csrfToken: string;
  passkey: Passkey;
  name?: string;
  error?: string;
}): string {
  return page({
    title: 'Rename passkey',
    narrow: true,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'security',
    body: html`<div class="card">
      <h1>Rename passkey</h1>
      <form method="post" action="/account/passkeys/${o.passkey.id}/rename" novalidate>
        <input type="hidden" name="_csrf" value="${o.csrfToken}" />
        <label for="passkey-name">Name</label>
        <input
          id="passkey-name"
          name="name"
          type="text"
          maxlength="${PASSKEY_NAME_MAX}"
          required
          autocomplete="off"
          value="${o.name ?? o.passkey.name}"
          aria-invalid="${o.error ? 'true' : 'false'}"
        />
        ${fieldError(o.error, 'passkey-name')}
        <div class="actions stretch">
          <a class="button secondary" href="/account/security#passkeys">Cancel</a>
          <button type="submit">Save name</button>
        </div>
      </form>
    </div>`,
  });
}

export function removePasskeyPage(o: { signedIn: SignedInUser; csrfToken: string; passkey: Passkey; last: boolean }): string {
  return page({
    title: 'Remove passkey',
    narrow: true,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'security',
    body: html`<div class="card">
      <h1>Remove “${o.passkey.name}”?</h1>
      <p>
        It will no longer sign you in to Agora. ${o.last ? 'It is your last passkey.' : ''} Also remove it from your device or password
        manager, which keeps it until you do.
      </p>
      <form method="post" action="/account/passkeys/${o.passkey.id}/remove">
        <input type="hidden" name="_csrf" value="${o.csrfToken}" />
        <div class="actions stretch">
          <a class="button secondary" href="/account/security#passkeys">Cancel</a>
          <button type="submit" class="danger">Remove passkey</button>
        </div>
      </form>
    </div>`,
  });
}
