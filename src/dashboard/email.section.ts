import { unverifiedNotice } from '../account-links/account-links.pages.js';
import { html, SafeHtml } from '../web/html.js';
import { fieldError } from '../web/layout.js';
import type { SignedInUser } from '../web/page-sessions.js';

const when = (date: Date) => new Date(date).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';

/** The security page's "E-mail address" section: the address and whether it is verified, a pending change, the form to change it. */
/** What the e-mail section shows (part of the security page's options). */
export interface EmailSectionOptions {
  signedIn: SignedInUser;
  csrfToken: string;
  /** Errors and typed value of the e-mail form. */
  emailErrors?: Record<string, string>;
  email?: string;
  /** A change of address waiting for its link. */
  pendingEmail?: { email: string; expiresAt: Date } | null;
}

export function emailSection(o: EmailSectionOptions): SafeHtml {
  const ee = o.emailErrors ?? {};
  const user = o.signedIn.user;
  return html`<h2 class="section" id="email">E-mail address</h2>
    <div class="card">
      <p>
        Now: <strong class="wrap">${user.email}</strong>
        ${user.emailVerified ? html`<span class="tag">verified</span>` : html`<span class="tag">not verified</span>`}
      </p>
      ${
        user.emailVerified
          ? null
          : unverifiedNotice({
              csrfToken: o.csrfToken,
              email: user.email,
              returnTo: '/account/security',
              what: 'create applications, personal access tokens and organizers',
            })
      }
      ${
        o.pendingEmail
          ? html`<div class="alert warn" role="status" id="pending-email">
              Waiting for <strong class="wrap">${o.pendingEmail.email}</strong>: follow the link we sent there before
              ${when(o.pendingEmail.expiresAt)} to make it your address. Until then Agora writes to ${user.email}.
            </div>`
          : null
      }
      <form method="post" action="/account/email" novalidate>
        <input type="hidden" name="_csrf" value="${o.csrfToken}" />
        <label for="new-email">New e-mail address</label>
        <input
          id="new-email"
          name="email"
          type="email"
          autocomplete="email"
          required
          value="${o.email ?? ''}"
          aria-invalid="${ee.email ? 'true' : 'false'}"
          aria-describedby="email-hint${ee.email ? ' email-error' : ''}"
        />
        <p class="hint" id="email-hint">We send a link to the new address; it becomes yours when you follow it, and the old one is told.</p>
        ${fieldError(ee.email, 'email')}
        <label for="email-current-password">Current password</label>
        <input
          id="email-current-password"
          name="current_password"
          type="password"
          autocomplete="current-password"
          required
          aria-invalid="${ee.currentPassword ? 'true' : 'false'}"
        />
        ${fieldError(ee.currentPassword, 'email-current-password')}
        <div class="actions"><button type="submit" class="secondary">Change e-mail address</button></div>
      </form>
    </div>`;
}
