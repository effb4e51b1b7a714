import type { SecondFactorMethods } from '../users/second-factors.js';
import type { SignInOffer } from '../sessions/sign-in-offers.js';
import { html } from '../web/html.js';
import { fieldError, page } from '../web/layout.js';

/** The second step's two ways with a code: the authenticator app's, or a recovery code. */
export type SecondStepMode = 'code' | 'recovery';

export interface SecondStepPageOptions {
  csrfToken: string;
  mode: SecondStepMode;
  methods: SecondFactorMethods;
  /** `phr`: an application asks for a passkey, and only a passkey will do. */
  require: 'aal2' | 'phr';
  /** A signed-in session asked for more (not a new sign-in). */
  stepUp: boolean;
  returnTo: string;
  /** The error of the code field. */
  error?: string;
  /** A problem with the whole request (throttled), above the form. */
  alert?: string;
  notice?: string;
  /** The signed-in user, on a step-up. */
  user?: { username: string; name: string } | null;
  /** "Use a passkey" (the passkeys module), when the user has one. */
  passkey?: SignInOffer | null;
}

function codeForm(o: SecondStepPageOptions) {
  return html`<form method="post" action="/sign-in/second-factor" novalidate>
    <input type="hidden" name="_csrf" value="${o.csrfToken}" />
    <input type="hidden" name="method" value="code" />
    <label for="code">Authentication code</label>
    <input
      id="code"
      name="code"
      type="text"
      inputmode="numeric"
      autocomplete="one-time-code"
      pattern="[0-9 ]*"
      maxlength="7"
      required
      autofocus
      aria-invalid="${o.error ? 'true' : 'false'}"
      aria-describedby="code-hint${o.error ? ' code-error' : ''}"
    />
    <p class="hint" id="code-hint">The 6-digit code your authenticator app shows for Agora.</p>
    ${fieldError(o.error, 'code')}
    <div class="actions stretch"><button type="submit">Verify</button></div>
  </form>`;
}

function recoveryForm(o: SecondStepPageOptions) {
  return html`<form method="post" action="/sign-in/second-factor" novalidate>
    <input type="hidden" name="_csrf" value="${o.csrfToken}" />
    <input type="hidden" name="method" value="recovery" />
    <label for="recovery-code">Recovery code</label>
    <input
      id="recovery-code"
      name="recovery_code"
      type="text"
      autocomplete="off"
      autocapitalize="none"
      spellcheck="false"
      maxlength="40"
      required
      autofocus
      aria-invalid="${o.error ? 'true' : 'false'}"
      aria-describedby="recovery-code-hint${o.error ? ' recovery-code-error' : ''}"
    />
    <p class="hint" id="recovery-code-hint">
      One of the codes you saved when you turned on two-factor authentication, like <code>abcde-23456</code>. Each works once.
    </p>
    ${fieldError(o.error, 'recovery-code')}
    <div class="actions stretch"><button type="submit">Verify</button></div>
  </form>`;
}

/** The second step of signing in (or of a step-up): a code from the app, a recovery code, or a passkey. */
export function secondStepPage(o: SecondStepPageOptions): string {
  const passkeyOnly = o.require === 'phr';
  const hasFactor = o.methods.totp || o.methods.passkeys > 0;
  // A recovery code when asked for, or when nothing else is left; the app's code when the user has the app.
  // A user with passkeys only sees the passkey step here (added by the passkeys pages) and a link to a recovery code.
  const withRecovery = !passkeyOnly && (o.mode === 'recovery' || !hasFactor);
  const withCode = !passkeyOnly && !withRecovery && o.methods.totp;
  const cancel = o.stepUp ? '/' : `/sign-in?return_to=${encodeURIComponent(o.returnTo)}`;
  return page({
    title: 'Two-factor authentication',
    narrow: true,
    user: o.user,
    csrfToken: o.csrfToken,
    notice: o.notice,
    body: html`<div class="card">
      <h1>Two-factor authentication</h1>
      <p class="lead">
        ${
          passkeyOnly
            ? 'The application you came from asks you to confirm it is you with a passkey.'
            : o.stepUp
              ? 'The application you came from asks you to confirm it is you with your second factor.'
              : 'Your account is protected by a second factor. Confirm it is you to finish signing in.'
        }
      </p>
      ${o.alert ? html`<div class="alert error" role="alert">${o.alert}</div>` : null}
      ${
        passkeyOnly && o.methods.passkeys === 0
          ? html`<div class="alert warn" role="status">
              You have no passkey yet. Add one on your <a href="/account/security#passkeys">security page</a>, then try again.
            </div>`
          : null
      }
      ${withCode ? codeForm(o) : null} ${withRecovery ? recoveryForm(o) : null}
      ${o.passkey && (withCode || withRecovery) ? html`<p class="divider"><span>or</span></p>` : null}
      ${o.passkey?.(o.csrfToken, { primary: !withCode && !withRecovery }) ?? null}
      <ul class="other-ways">
        ${
          !passkeyOnly && o.mode === 'code' && o.methods.totp
            ? html`<li><a href="/sign-in/second-factor?method=recovery">Use a recovery code</a></li>`
            : null
        }
        ${
          !passkeyOnly && o.mode === 'recovery' && o.methods.totp
            ? html`<li><a href="/sign-in/second-factor">Use your authenticator app</a></li>`
            : null
        }
        <li><a href="${cancel}">Cancel</a></li>
      </ul>
    </div>`,
  });
}

/** A step-up asked of a user who has no second factor to step up with. */
export function noSecondFactorPage(o: { csrfToken: string; user: { username: string; name: string }; returnTo: string }): string {
  return page({
    title: 'Two-factor authentication',
    narrow: true,
    user: o.user,
    csrfToken: o.csrfToken,
    body: html`<div class="card">
      <h1>Two-factor authentication is not set up</h1>
      <p>
        The application you came from asks you to confirm it is you with a second factor, and your account has none yet. Set up an
        authenticator app or a passkey on your <a href="/account/security#two-factor">security page</a>, then try again.
      </p>
      <div class="actions stretch"><a class="button secondary" href="/">Back to Agora</a></div>
    </div>`,
  });
}
