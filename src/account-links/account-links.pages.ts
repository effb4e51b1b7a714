import { html, SafeHtml } from '../web/html.js';
import { fieldError, page } from '../web/layout.js';
import { PASSWORD_MIN_LENGTH } from '../users/user-validation.js';

type Viewer = { username: string; name: string } | null;

/** Where a sign-up, and a reset request, lead: the same page whatever became of the address. */
export function checkEmailPath(about: 'sign-up' | 'reset', returnTo = '/'): string {
  return `/check-email?about=${about}${returnTo === '/' ? '' : `&return_to=${encodeURIComponent(returnTo)}`}`;
}

/** The answer to a sign-up or a reset request, the same whether or not the address has an account. */
export function checkEmailPage(o: { about: 'sign-up' | 'reset'; returnTo: string }): string {
  const signIn = `/sign-in?return_to=${encodeURIComponent(o.returnTo)}`;
  return page({
    title: 'Check your e-mail',
    narrow: true,
    body: html`<div class="card">
      <h1>Check your e-mail</h1>
      ${
        o.about === 'sign-up'
          ? html`<p class="lead">We sent a message to the address you gave. Follow the link in it to verify your address.</p>
              <p>
                If the address already had an Agora account, the message says so instead, and no new account was created: sign in, or reset
                your password.
              </p>`
          : html`<p class="lead">If an Agora account has the address you gave, we sent it a link to choose a new password.</p>
              <p>The link works for one hour, once. Nothing arrived? Look in your spam folder, or ask again in a few minutes.</p>`
      }
      <div class="actions stretch"><a class="button" href="${signIn}">Sign in</a></div>
      <p class="footnote"><a href="/forgot-password">Forgot your password?</a></p>
    </div>`,
  });
}

export function forgotPasswordPage(o: { csrfToken: string; email?: string; error?: string; notice?: string }): string {
  return page({
    title: 'Forgot your password?',
    narrow: true,
    body: html`<div class="card">
      <h1>Forgot your password?</h1>
      <p class="lead">Give the e-mail address of your account: we send it a link to choose a new password.</p>
      ${o.notice ? html`<div class="alert error" role="alert">${o.notice}</div>` : null}
      <form method="post" action="/forgot-password" novalidate>
        <input type="hidden" name="_csrf" value="${o.csrfToken}" />
        <label for="email">E-mail address</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="email"
          required
          autofocus
          value="${o.email ?? ''}"
          aria-invalid="${o.error ? 'true' : 'false'}"
          ${o.error ? html`aria-describedby="email-error"` : ''}
        />
        ${fieldError(o.error, 'email')}
        <div class="actions stretch"><button type="submit">Send the link</button></div>
      </form>
      <p class="footnote"><a href="/sign-in">Back to sign-in</a></p>
    </div>`,
  });
}

export function resetPasswordPage(o: { csrfToken: string; token: string; error?: string }): string {
  return page({
    title: 'Choose a new password',
    narrow: true,
    body: html`<div class="card">
      <h1>Choose a new password</h1>
      <p class="lead">Every browser signed in to your account is signed out: sign in again with the new password.</p>
      <form method="post" action="/reset-password" novalidate>
        <input type="hidden" name="_csrf" value="${o.csrfToken}" />
        <input type="hidden" name="token" value="${o.token}" />
        <label for="password">New password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="new-password"
          required
          autofocus
          aria-invalid="${o.error ? 'true' : 'false'}"
          aria-describedby="password-hint${o.error ? ' password-error' : ''}"
        />
        <p class="hint" id="password-hint">At least ${PASSWORD_MIN_LENGTH} characters; a passphrase is easiest to remember</p>
        ${fieldError(o.error, 'password')}
        <div class="actions stretch"><button type="submit">Set the new password</button></div>
      </form>
    </div>`,
  });
}

export function passwordResetDonePage(): string {
  return page({
    title: 'Password changed',
    narrow: true,
    body: html`<div class="card">
      <h1>Password changed</h1>
      <p class="lead">
        Your new password works from now on. Every browser that was signed in to your account has been signed out, this one too.
      </p>
      <div class="actions stretch"><a class="button" href="/sign-in">Sign in</a></div>
    </div>`,
  });
}

/** Why a mailed link does nothing, and what to do instead. */
export function linkProblemPage(o: {
  state: 'invalid' | 'used' | 'expired' | 'stale' | 'taken';
  about: 'reset' | 'verify';
  user: Viewer;
  csrfToken: string;
}): string {
  const again =
    o.about === 'reset'
      ? html`<a class="button" href="/forgot-password">Ask for a new link</a>`
      : html`<a class="button" href="${o.user ? '/account/security#email' : '/sign-in?return_to=%2Faccount%2Fsecurity'}"
          >Go to your e-mail settings</a
        >`;
  const { heading, text } = LINK_PROBLEMS[o.state];
  return page({
    title: heading,
    narrow: true,
    user: o.user,
    csrfToken: o.csrfToken,
    body: html`<div class="card">
      <h1>${heading}</h1>
      <p class="lead">${text}</p>
      <div class="actions stretch">${again}</div>
    </div>`,
  });
}

const LINK_PROBLEMS: Record<'invalid' | 'used' | 'expired' | 'stale' | 'taken', { heading: string; text: string }> = {
  invalid: {
    heading: 'This link is not valid',
    text: 'The address is incomplete or was never sent by Agora. Copy the whole link from the e-mail.',
  },
  used: {
    heading: 'This link was already used',
    text: 'A link works once, and a newer link replaces the older ones. Ask for a new link if you still need one.',
  },
  expired: { heading: 'This link has expired', text: 'Links to reset a password work for an hour, links to verify an address for a day.' },
  stale: {
    heading: 'This link is for another address',
    text: 'The account’s e-mail address changed since the link was sent, so it no longer proves anything.',
  },
  taken: {
    heading: 'This address is used by another account',
    text: 'Another account took this address since the link was sent, so it cannot become yours. Your address stays as it was.',
  },
};

/** The page a verification link opens: a button, so that a mail scanner opening the link verifies nothing. */
export function verifyEmailPage(o: {
  csrfToken: string;
  token: string;
  purpose: 'verify-email' | 'change-email';
  email: string;
  user: Viewer;
}): string {
  const change = o.purpose === 'change-email';
  return page({
    title: change ? 'Confirm your new address' : 'Verify your address',
    narrow: true,
    user: o.user,
    csrfToken: o.csrfToken,
    body: html`<div class="card">
      <h1>${change ? 'Confirm your new e-mail address' : 'Verify your e-mail address'}</h1>
      <p class="lead">
        ${
          change
            ? html`<strong class="wrap">${o.email}</strong> becomes your account’s address; the old one is told.`
            : html`Confirm that <strong class="wrap">${o.email}</strong> is yours.`
        }
      </p>
      <form method="post" action="/verify-email">
        <input type="hidden" name="_csrf" value="${o.csrfToken}" />
        <input type="hidden" name="token" value="${o.token}" />
        <div class="actions stretch"><button type="submit">${change ? 'Confirm my new address' : 'Verify my address'}</button></div>
      </form>
    </div>`,
  });
}

export function emailVerifiedPage(o: { changed: boolean; user: Viewer; csrfToken: string }): string {
  return page({
    title: o.changed ? 'E-mail address changed' : 'E-mail address verified',
    narrow: true,
    user: o.user,
    csrfToken: o.csrfToken,
    body: html`<div class="card">
      <h1>${o.changed ? 'Your e-mail address changed' : 'Your e-mail address is verified'}</h1>
      <p class="lead">
        ${
          o.changed
            ? 'Agora writes to the new address from now on. The old address got a message saying so.'
            : 'You can now create applications, personal access tokens and organizers.'
        }
      </p>
      <div class="actions stretch">
        ${o.user ? html`<a class="button" href="/account/security#email">Continue</a>` : html`<a class="button" href="/sign-in">Sign in</a>`}
      </div>
    </div>`,
  });
}

/**
 * What a page says in place of a form an unverified account may not use: why, and a button that mails
 * the link again (POST /account/email/verification, back to `returnTo`).
 */
export function unverifiedNotice(o: { csrfToken: string; email: string; returnTo: string; what: string }): SafeHtml {
  return html`<div class="alert warn" role="status" id="verify-email">
    <p><strong>Verify your e-mail address to ${o.what}.</strong></p>
    <p>We sent a link to <strong class="wrap">${o.email}</strong> when you signed up. Follow it, then come back here.</p>
    <form method="post" action="/account/email/verification">
      <input type="hidden" name="_csrf" value="${o.csrfToken}" />
      <input type="hidden" name="return_to" value="${o.returnTo}" />
      <div class="actions"><button type="submit" class="secondary">Send the link again</button></div>
    </form>
  </div>`;
}

export function resendRefusedPage(o: { message: string; returnTo: string; user: Viewer; csrfToken: string }): string {
  return page({
    title: 'Too many e-mails',
    narrow: true,
    user: o.user,
    csrfToken: o.csrfToken,
    body: html`<div class="card">
      <h1>Too many e-mails</h1>
      <div class="alert error" role="alert">${o.message}</div>
      <div class="actions stretch"><a class="button secondary" href="${o.returnTo}">Back</a></div>
    </div>`,
  });
}
