import { SCOPES, ScopeName } from '../auth/scopes.js';
import type { Application } from '../oauth/application.model.js';
import type { AuthorizedApplication } from '../oauth/grants.service.js';
import type { SignedInUser } from '../sessions/sessions.service.js';
import { isoDay } from '../web/form-values.js';
import { html } from '../web/html.js';
import { confirmationPage, fieldError, page } from '../web/layout.js';

const tags = (scopes: string[]) => scopes.map((s) => html`<span class="tag">${s}</span>`);

function scopeChecks(chosen: string[]) {
  return html`<fieldset class="checks">
    <legend><strong>Scopes the application may request</strong></legend>
    ${(Object.keys(SCOPES) as ScopeName[]).map(
      (s) =>
        html`<label
          ><input type="checkbox" name="scopes" value="${s}" ${chosen.includes(s) ? 'checked' : ''} /><span
            ><code>${s}</code> — ${SCOPES[s]}</span
          ></label
        >`,
    )}
  </fieldset>`;
}

/** Name, redirect URIs and scopes: the same fields to register an application and to edit it. */
function applicationFields(values: { name: string; redirectUris: string; scopes: string[] }, errors: Record<string, string> = {}) {
  return html`<label for="app-name">Name</label>
    <input id="app-name" name="name" type="text" required value="${values.name}" aria-invalid="${errors.name ? 'true' : 'false'}" />
    ${fieldError(errors.name, 'app-name')}
    <label for="redirect-uris">Redirect URIs</label>
    <textarea
      id="redirect-uris"
      name="redirect_uris"
      rows="3"
      required
      aria-describedby="redirect-uris-hint"
      aria-invalid="${errors.redirectUris ? 'true' : 'false'}"
    >
${values.redirectUris}</textarea>
    <p class="hint" id="redirect-uris-hint">One per line. Matched exactly; https, or http for localhost.</p>
    ${fieldError(errors.redirectUris, 'redirect-uris')} ${scopeChecks(values.scopes)} ${fieldError(errors.scopes, 'scopes')}`;
}

interface Common {
  signedIn: SignedInUser;
  csrfToken: string;
}

export function applicationsPage(
  o: Common & {
    applications: Application[];
    notice?: string;
    errors?: Record<string, string>;
    values?: { name?: string; redirectUris?: string; scopes?: string[] };
  },
): string {
  const values = o.values ?? {};
  const chosen = values.scopes ?? ['openid', 'profile', 'api'];
  return page({
    title: 'Applications',
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'applications',
    notice: o.notice,
    body: html` <h1>Your applications</h1>
      <p class="lead">OAuth applications you develop. They sign users in with Agora and call the API on their behalf.</p>
      ${
        o.applications.length === 0
          ? html`<p class="empty">You have not registered an application yet.</p>`
          : html`<table class="stack">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Application ID</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                ${o.applications.map(
                  (a) =>
                    html`<tr>
                      <td class="row-title" data-label="Name"><a href="/applications/${a.id}">${a.name}</a></td>
                      <td data-label="Application ID"><code>${a.clientId}</code></td>
                      <td data-label="Scopes">${tags(a.scopes)}</td>
                      <td class="date" data-label="Created">${isoDay(a.createdAt)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
      <h2 class="section">Register an application</h2>
      <div class="card">
        <form method="post" action="/applications" novalidate>
          <input type="hidden" name="_csrf" value="${o.csrfToken}" />
          ${applicationFields({ name: values.name ?? '', redirectUris: values.redirectUris ?? '', scopes: chosen }, o.errors)}
          <div class="actions"><button type="submit">Register application</button></div>
        </form>
      </div>`,
  });
}

export function applicationPage(
  o: Common & {
    application: Application;
    baseUrl: string;
    secret?: string;
    notice?: string;
    errors?: Record<string, string>;
    /** What was typed in the settings form, when it is shown again with errors. */
    values?: { name: string; redirectUris: string; scopes: string[] };
  },
): string {
  const a = o.application;
  const values = o.values ?? { name: a.name, redirectUris: a.redirectUris.join('\n'), scopes: a.scopes };
  return page({
    title: a.name,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'applications',
    notice: o.notice,
    body: html` <p><a href="/applications">← Applications</a></p>
      <h1>${a.name}</h1>
      ${
        o.secret
          ? html`<div class="alert ok" role="status">
              <strong>Application Secret</strong>
              <div class="secret-box">
                <code id="client-secret" class="secret">${o.secret}</code
                ><button type="button" class="secondary" data-copy="client-secret" hidden>Copy</button>
              </div>
              <strong>Copy it now: it will not be shown again.</strong> Keep it on your server.
            </div>`
          : null
      }
      <div class="card">
        <dl class="profile">
          <dt>Application ID</dt>
          <dd><code id="client-id">${a.clientId}</code></dd>
          <dt>Redirect URIs</dt>
          <dd>${a.redirectUris.map((u) => html`<code>${u}</code><br />`)}</dd>
          <dt>Scopes</dt>
          <dd>${tags(a.scopes)}</dd>
          <dt>Authorization URL</dt>
          <dd><code>${o.baseUrl}/oauth/authorize</code></dd>
          <dt>Token URL</dt>
          <dd><code>${o.baseUrl}/oauth/token</code></dd>
          <dt>Discovery URL</dt>
          <dd><code>${o.baseUrl}/.well-known/openid-configuration</code></dd>
        </dl>
      </div>
      <h2 class="section">Settings</h2>
      <div class="card">
        <form method="post" action="/applications/${a.id}" novalidate>
          <input type="hidden" name="_csrf" value="${o.csrfToken}" />
          ${applicationFields(values, o.errors)}
          <div class="actions"><button type="submit">Save changes</button></div>
        </form>
      </div>
      <h2 class="section">Secret</h2>
      <p class="hint">A new secret replaces the current one at once: update your application's configuration right after.</p>
      <div class="actions"><a class="button secondary" href="/applications/${a.id}/secret">Regenerate secret…</a></div>
      <h2 class="section">Delete</h2>
      <p class="hint">Deleting the application stops every token issued to it.</p>
      <div class="actions"><a class="button danger" href="/applications/${a.id}/delete">Delete application…</a></div>`,
  });
}

export function confirmDeletePage(o: Common & { application: Application }): string {
  const a = o.application;
  return confirmationPage({
    title: 'Delete application',
    heading: `Delete “${a.name}”?`,
    consequences:
      "Every access token issued to it stops working at once, users' approvals are forgotten, and its client ID and secret can no longer be used. This cannot be undone.",
    action: `/applications/${a.id}/delete`,
    button: 'Delete application',
    cancelHref: `/applications/${a.id}`,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'applications',
  });
}

export function authorizedPage(o: Common & { grants: AuthorizedApplication[]; notice?: string }): string {
  return page({
    title: 'Authorized applications',
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'authorized',
    notice: o.notice,
    body: html` <h1>Authorized applications</h1>
      <p class="lead">Applications you allowed to use your account. Revoking access signs them out: their tokens stop working at once.</p>
      ${
        o.grants.length === 0
          ? html`<p class="empty">You have not authorized any application.</p>`
          : html`<table class="stack">
              <thead>
                <tr>
                  <th scope="col">Application</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Authorized</th>
                  <th scope="col"><span class="muted">Action</span></th>
                </tr>
              </thead>
              <tbody>
                ${o.grants.map(
                  (g) =>
                    html`<tr>
                      <td class="row-title" data-label="Application">${g.name}</td>
                      <td data-label="Scopes">${tags(g.scopes)}</td>
                      <td class="date" data-label="Authorized">${isoDay(g.createdAt)}</td>
                      <td class="row-action">
                        <a class="button danger" href="/account/authorized/${g.applicationId}/revoke">Revoke access…</a>
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }`,
  });
}

export function confirmRegeneratePage(o: Common & { application: Application }): string {
  const a = o.application;
  return confirmationPage({
    title: 'Regenerate secret',
    heading: `Regenerate the secret of “${a.name}”?`,
    consequences:
      'The current secret stops working at once: the application cannot exchange codes until you put the new secret in its configuration. Tokens already issued keep working.',
    action: `/applications/${a.id}/secret`,
    button: 'Regenerate secret',
    cancelHref: `/applications/${a.id}`,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'applications',
  });
}

export function confirmRevokeAccessPage(o: Common & { grant: AuthorizedApplication }): string {
  const g = o.grant;
  return confirmationPage({
    title: 'Revoke access',
    heading: `Revoke access for “${g.name}”?`,
    consequences: 'Its tokens for your account stop working at once, and it must ask for your approval again to use your account.',
    action: `/account/authorized/${g.applicationId}/revoke`,
    button: 'Revoke access',
    cancelHref: '/account/authorized',
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'authorized',
  });
}
