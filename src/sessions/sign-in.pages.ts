import { page } from '../web/layout.js';
import { html } from '../web/html.js';
import type { SignInOffer } from './sign-in-offers.js';
import type { ReturnDestination } from './return-origins.js';

/** What the page is the way to: the application an authorization request comes from, a device, or Agora itself. */
function heading(destination: ReturnDestination | undefined) {
  if (destination?.application) {
    const { name, unverified } = destination.application;
    return html`<h1>Sign in to continue to <span class="app-name">${name}</span></h1>
      <p class="lead">
        Use your Agora username or email
        address.${unverified ? html` <span class="muted">${name} registered itself: Agora does not vouch for its name.</span>` : null}
      </p>`;
  }
  if (destination?.device) {
    return html`<h1>Sign in to connect a device</h1>
      <p class="lead">Use your Agora username or email address, then enter the code your device shows.</p>`;
  }
  return html`<h1>Sign in to Agora</h1>
    <p class="lead">Use your username or email address.</p>`;
}

export function signInPage(options: {
  csrfToken: string;
  returnTo: string;
  login?: string;
  error?: string;
  notice?: string;
  /** Another way to sign in, below the password form (a passkey). */
  offer?: SignInOffer | null;
  /** Where signing in leads: "Sign in to continue to <application>" on the way to an authorization request. */
  destination?: ReturnDestination;
}): string {
  return page({
    title: options.destination?.application ? `Sign in to continue to ${options.destination.application.name}` : 'Sign in',
    narrow: true,
    body: html`<div class="card">
      ${heading(options.destination)} ${options.notice ? html`<div class="alert warn" role="status">${options.notice}</div>` : null}
      ${options.error ? html`<div class="alert error" role="alert">${options.error}</div>` : null}
      <form method="post" action="/sign-in" novalidate>
        <input type="hidden" name="_csrf" value="${options.csrfToken}" />
        <input type="hidden" name="return_to" value="${options.returnTo}" />
        <label for="login">Username or email</label>
        <input id="login" name="login" type="text" autocomplete="username webauthn" required autofocus value="${options.login ?? ''}" />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <p class="hint"><a href="/forgot-password">Forgot password?</a></p>
        <div class="actions stretch"><button type="submit">Sign in</button></div>
      </form>
      ${options.offer?.(options.csrfToken) ?? null}
      <p class="footnote">New to Agora? <a href="/sign-up?return_to=${encodeURIComponent(options.returnTo)}">Create an account</a></p>
    </div>`,
  });
}
