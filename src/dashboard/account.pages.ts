import type { SecondFactorRequirement } from '../users/second-factors.js';
import { secondFactorRequiredNotice } from './two-factor.section.js';
import { unverifiedNotice } from '../account-links/account-links.pages.js';
import { PERSONAL_TOKEN_SCOPES, SCOPES } from '../auth/scopes.js';
import type { PersonalToken } from '../personal-tokens/personal-token.model.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { isoDay } from '../web/form-values.js';
import { html } from '../web/html.js';
import { confirmationPage, fieldError, page } from '../web/layout.js';

export interface AccountPageOptions {
  signedIn: SignedInUser;
  csrfToken: string;
  tokens: PersonalToken[];
  /** How many of them count against the limit (neither revoked nor expired), as the service counts them. */
  activeTokens: number;
  /** The most active tokens the user may hold (PERSONAL_TOKENS_MAX_ACTIVE). */
  maxTokens: number;
  /** A token just created: shown this once. */
  created?: { name: string; token: string };
  /** What the previous form did. */
  notice?: string;
  /** Whether the user gets reminders (the non-essential mail). */
  mailReminders: boolean;
  /** What was typed in the profile form, with its error. */
  profile?: { name: string; error?: string };
  errors?: Record<string, string>;
  values?: { name?: string; scopes?: string[]; expiresAt?: string };
  /** Organizers requiring a second factor the user does not have yet. */
  secondFactorRequired?: readonly SecondFactorRequirement[];
}

export function accountPage(o: AccountPageOptions): string {
  const active = o.tokens.filter((t) => !t.revokedAt);
  const values = o.values ?? {};
  return page({
    title: 'Account',
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'account',
    notice: o.notice,
    body: html` <h1>Your account</h1>
      ${secondFactorRequiredNotice(o.secondFactorRequired ?? [])}
      <div class="card">
        <dl class="profile">
          <dt>Username</dt>
          <dd>@${o.signedIn.user.username}</dd>
          <dt>Email</dt>
          <dd>${o.signedIn.user.email}</dd>
        </dl>
        <form method="post" action="/account/profile" novalidate>
          <input type="hidden" name="_csrf" value="${o.csrfToken}" />
          <label for="profile-name">Display name</label>
          <input
            id="profile-name"
            name="name"
            type="text"
            autocomplete="name"
            required
            value="${o.profile?.name ?? o.signedIn.user.name}"
            aria-invalid="${o.profile?.error ? 'true' : 'false'}"
          />
          ${fieldError(o.profile?.error, 'profile-name')}
          <div class="actions"><button type="submit" class="secondary">Save profile</button></div>
        </form>
      </div>

      <h2 class="section" id="mail">E-mail</h2>
      <div class="card">
        <p>
          Mail about your own registrations is always sent to ${o.signedIn.user.email}: confirmations with your tickets, the waitlist,
          changes to the time or place of an event, cancellations.
        </p>
        <form method="post" action="/account/mail" novalidate>
          <input type="hidden" name="_csrf" value="${o.csrfToken}" />
          <fieldset class="checks">
            <legend><strong>Optional mail</strong></legend>
            <label
              ><input type="checkbox" name="reminders" value="on" ${o.mailReminders ? 'checked' : ''} />
              <span>Reminders the day before events you registered for</span></label
            >
          </fieldset>
          <div class="actions"><button type="submit" class="secondary">Save e-mail settings</button></div>
        </form>
      </div>

      <h2 class="section" id="tokens">Personal access tokens</h2>
      <p class="lead">
        For your own scripts and automation: send one in the <code>Private-Token</code> header. A token works until you revoke it or it
        expires.
      </p>
      <p class="lead" id="token-limit">
        You can have up to ${o.maxTokens} active tokens (you have ${o.activeTokens}). All of them share one API rate limit, so more tokens
        do not allow more requests.
      </p>
      ${
        o.created
          ? html`<div class="alert ok" role="status">
              <strong>Your new token “${o.created.name}”</strong>
              <div class="secret-box">
                <code id="new-token" class="secret">${o.created.token}</code
                ><button type="button" class="secondary" data-copy="new-token" hidden>Copy</button>
              </div>
              <strong>Copy it now: it will not be shown again.</strong>
            </div>`
          : null
      }
      ${
        o.signedIn.user.emailVerified
          ? null
          : unverifiedNotice({
              csrfToken: o.csrfToken,
              email: o.signedIn.user.email,
              returnTo: '/account',
              what: 'create personal access tokens',
            })
      }
      <div class="card" ${o.signedIn.user.emailVerified ? '' : html`hidden`}>
        ${o.errors?.form ? html`<div class="alert error" role="alert">${o.errors.form}</div>` : null}
        <form method="post" action="/account/tokens" novalidate>
          <input type="hidden" name="_csrf" value="${o.csrfToken}" />
          <label for="token-name">Token name</label>
          <input
            id="token-name"
            name="name"
            type="text"
            required
            value="${values.name ?? ''}"
            aria-invalid="${o.errors?.name ? 'true' : 'false'}"
            placeholder="deploy script"
          />
          ${fieldError(o.errors?.name, 'token-name')}
          <fieldset class="checks">
            <legend><strong>Scopes</strong></legend>
            ${PERSONAL_TOKEN_SCOPES.map(
              (scope) =>
                html`<label
                  ><input type="checkbox" name="scopes" value="${scope}" ${values.scopes?.includes(scope) ? 'checked' : ''} />
                  <span><code>${scope}</code> — ${SCOPES[scope]}</span></label
                >`,
            )}
          </fieldset>
          ${fieldError(o.errors?.scopes, 'scopes')}
          <label for="token-expires">Expires on (optional)</label>
          <input id="token-expires" name="expires_at" type="date" value="${values.expiresAt ?? ''}" />
          ${fieldError(o.errors?.expiresAt, 'token-expires')}
          <div class="actions"><button type="submit">Create token</button></div>
        </form>
      </div>

      <h2 class="section">Active tokens</h2>
      ${
        active.length === 0
          ? html`<p class="empty">You have no active personal access tokens.</p>`
          : html`<table class="stack">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col"><span class="muted">Action</span></th>
                </tr>
              </thead>
              <tbody>
                ${active.map(
                  (t) =>
                    html`<tr>
                      <td class="row-title" data-label="Name">${t.name}</td>
                      <td data-label="Scopes">${t.scopes.map((s) => html`<span class="tag">${s}</span>`)}</td>
                      <td class="date" data-label="Created">${isoDay(t.createdAt)}</td>
                      <td class="date" data-label="Last used">${t.lastUsedAt ? isoDay(t.lastUsedAt) : 'Never'}</td>
                      <td class="date" data-label="Expires">${t.expiresAt ? isoDay(t.expiresAt) : 'Never'}</td>
                      <td class="row-action"><a class="button secondary" href="/account/tokens/${t.id}/revoke">Revoke…</a></td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }`,
  });
}

export function confirmRevokePage(o: { signedIn: SignedInUser; csrfToken: string; token: PersonalToken }): string {
  return confirmationPage({
    title: 'Revoke token',
    heading: `Revoke “${o.token.name}”?`,
    consequences: html`Scripts using this token will get <code>401 Unauthorized</code> from their very next request. This cannot be undone.`,
    action: `/account/tokens/${o.token.id}/revoke`,
    button: 'Revoke token',
    cancelHref: '/account#tokens',
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
  });
}
