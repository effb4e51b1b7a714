import type { SecondFactorMethods, SecondFactorRequirement } from '../users/second-factors.js';
import { html, SafeHtml } from '../web/html.js';

/**
 * What the account and security pages say to a member of organizers that require a second factor while
 * the member has none: which, and by when (GitLab's grace-period banner); nothing otherwise.
 */
export function secondFactorRequiredNotice(requirements: readonly SecondFactorRequirement[]): SafeHtml | null {
  if (requirements.length === 0) return null;
  return html`<div class="alert warn" role="status" id="second-factor-required">
    <p><strong>Set up two-factor authentication: your team requires it.</strong></p>
    <ul>
      ${requirements.map((r) =>
        r.passed
          ? html`<li>
              <strong>${r.organizerName}</strong> has required it since ${at(r.deadline)}: you cannot act for this organizer until you set
              one up.
            </li>`
          : html`<li>
              <strong>${r.organizerName}</strong> requires it by ${at(r.deadline)}: after that you cannot act for this organizer until you
              set one up.
            </li>`,
      )}
    </ul>
    <p>An authenticator app or a passkey will do: <a href="/account/security#two-factor">set one up on the Security page</a>.</p>
  </div>`;
}

/** A time to the minute, in UTC, machine-readable in `datetime`. */
function at(date: Date): SafeHtml {
  const iso = date.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

/** The "Two-factor authentication" section of the security page: the authenticator app, and the recovery codes. */
export function twoFactorSection(methods: SecondFactorMethods, csrfToken: string): SafeHtml {
  const protectedBySecondFactor = methods.totp || methods.passkeys > 0;
  return html`<h2 class="section" id="two-factor">Two-factor authentication</h2>
    <div class="card">
      <h3 class="subsection">Authenticator app ${methods.totp ? html`<span class="tag">on</span>` : null}</h3>
      ${
        methods.totp
          ? html`<p>Signing in asks for a code from your authenticator app after your password.</p>
              <div class="actions"><a class="button danger" href="/account/two-factor/disable">Turn off…</a></div>`
          : html`<p>
                Add a second step to signing in: after your password, a 6-digit code from an app on your phone (such as Google
                Authenticator, Microsoft Authenticator, 1Password or Aegis). Someone who learns your password still cannot get in.
              </p>
              <form method="post" action="/account/two-factor/totp/start">
                <input type="hidden" name="_csrf" value="${csrfToken}" />
                <div class="actions"><button type="submit">Set up authenticator app</button></div>
              </form>`
      }
      ${
        protectedBySecondFactor
          ? html`<h3 class="subsection">Recovery codes</h3>
              <p>
                ${
                  methods.recoveryCodesLeft === 0
                    ? 'You have no recovery codes left: without your second factor you could not sign in. Make new ones now.'
                    : `${methods.recoveryCodesLeft} of 10 left. Each one signs you in once when your phone or passkey is not at hand.`
                }
              </p>
              <div class="actions"><a class="button secondary" href="/account/two-factor/recovery-codes">Recovery codes…</a></div>`
          : null
      }
    </div>`;
}
