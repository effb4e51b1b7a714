import { SCOPES } from '../auth/scopes.js';
import type { ServiceAccount } from '../events/service-accounts.service.js';
import { SERVICE_ACCOUNT_SCOPES } from '../oauth/clients/application-validation.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { isoDay } from '../web/form-values.js';
import { html } from '../web/html.js';
import { confirmationPage, fieldError, page } from '../web/layout.js';

interface Common {
  signedIn: SignedInUser;
  csrfToken: string;
}

/** What was typed in the form, to show it again with its errors. */
export interface ServiceAccountFormValues {
  organizerId: string;
  name: string;
  scopes: string[];
}

const tags = (scopes: string[]) => scopes.map((s) => html`<span class="tag">${s}</span>`);

/** The organizers the user owns, each with its service accounts, and the form that makes one. */
export function serviceAccountsPage(
  o: Common & {
    organizers: { id: string; name: string; accounts: ServiceAccount[] }[];
    notice?: string;
    errors?: Record<string, string>;
    values?: ServiceAccountFormValues;
  },
): string {
  const values = o.values ?? { organizerId: o.organizers[0]?.id ?? '', name: '', scopes: ['read_api'] };
  return page({
    title: 'Service accounts',
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'service-accounts',
    notice: o.notice,
    body: html`<h1>Service accounts</h1>
      <p class="lead">
        A service account lets a program act for one of your organizers (its events, registrations and check-ins) with the
        <code>client_credentials</code> grant, never as a person. Only an organizer's owners create and delete them.
      </p>
      ${
        o.organizers.length === 0
          ? html`<p class="empty">You do not own an organizer.</p>`
          : o.organizers.map(
              (org) =>
                html`<h2 class="section" id="organizer-${org.id}">${org.name}</h2>
                  ${
                    org.accounts.length === 0
                      ? html`<p class="empty">No service account.</p>`
                      : html`<table class="stack">
                          <thead>
                            <tr>
                              <th scope="col">Name</th>
                              <th scope="col">Client ID</th>
                              <th scope="col">Scopes</th>
                              <th scope="col">Created</th>
                            </tr>
                          </thead>
                          <tbody>
                            ${org.accounts.map(
                              (a) =>
                                html`<tr>
                                  <td class="row-title" data-label="Name"><a href="/service-accounts/${a.id}">${a.name}</a></td>
                                  <td data-label="Client ID"><code>${a.clientId}</code></td>
                                  <td data-label="Scopes">${tags(a.scopes)}</td>
                                  <td class="date" data-label="Created">${isoDay(a.createdAt)}</td>
                                </tr>`,
                            )}
                          </tbody>
                        </table>`
                  }`,
            )
      }
      ${
        o.organizers.length === 0
          ? null
          : html`<h2 class="section">Create a service account</h2>
              <div class="card">
                <form method="post" action="/service-accounts" novalidate>
                  <input type="hidden" name="_csrf" value="${o.csrfToken}" />
                  <label for="sa-organizer">Organizer</label>
                  <select id="sa-organizer" name="organizer_id" aria-invalid="${o.errors?.organizerId ? 'true' : 'false'}">
                    ${o.organizers.map(
                      (org) => html`<option value="${org.id}" ${org.id === values.organizerId ? 'selected' : ''}>${org.name}</option>`,
                    )}
                  </select>
                  ${fieldError(o.errors?.organizerId, 'sa-organizer')}
                  <label for="sa-name">Name</label>
                  <input
                    id="sa-name"
                    name="name"
                    type="text"
                    required
                    value="${values.name}"
                    aria-invalid="${o.errors?.name ? 'true' : 'false'}"
                  />
                  ${fieldError(o.errors?.name, 'sa-name')}
                  <fieldset class="checks">
                    <legend><strong>Access granted</strong></legend>
                    ${SERVICE_ACCOUNT_SCOPES.map(
                      (s) =>
                        html`<label
                          ><input type="checkbox" name="scopes" value="${s}" ${values.scopes.includes(s) ? 'checked' : ''} /><span
                            ><code>${s}</code> — ${SCOPES[s].replace('your data', "the organizer's data")}</span
                          ></label
                        >`,
                    )}
                  </fieldset>
                  ${fieldError(o.errors?.scopes, 'scopes')}
                  <div class="actions"><button type="submit">Create service account</button></div>
                </form>
              </div>`
      }`,
  });
}

export function serviceAccountPage(o: Common & { account: ServiceAccount; baseUrl: string; secret?: string; notice?: string }): string {
  const a = o.account;
  return page({
    title: a.name,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'service-accounts',
    notice: o.notice,
    body: html`<p><a href="/service-accounts">← Service accounts</a></p>
      <h1>${a.name}</h1>
      ${
        o.secret
          ? html`<div class="alert ok" role="status">
              <strong>Client secret</strong>
              <div class="secret-box">
                <code id="client-secret" class="secret">${o.secret}</code
                ><button type="button" class="secondary" data-copy="client-secret" hidden>Copy</button>
              </div>
              <strong>Copy it now: it will not be shown again.</strong> Keep it on the server that uses it.
            </div>`
          : null
      }
      <div class="card">
        <dl class="profile">
          <dt>Organizer</dt>
          <dd>${a.organizerName}</dd>
          <dt>Client ID</dt>
          <dd><code id="client-id">${a.clientId}</code></dd>
          <dt>Scopes</dt>
          <dd>${tags(a.scopes)}</dd>
          <dt>Created</dt>
          <dd class="date">${isoDay(a.createdAt)}</dd>
          <dt>Token URL</dt>
          <dd><code>${o.baseUrl}/oauth/token</code> with <code>grant_type=client_credentials</code></dd>
        </dl>
      </div>
      <h2 class="section">Tokens</h2>
      <p class="hint">Revoking ends every token it holds now, here and on every server; its secret still gets new ones.</p>
      <div class="actions"><a class="button secondary" href="/service-accounts/${a.id}/revoke">Revoke its tokens…</a></div>
      <h2 class="section">Delete</h2>
      <p class="hint">Deleting the service account stops its secret and every token it holds at once.</p>
      <div class="actions"><a class="button danger" href="/service-accounts/${a.id}/delete">Delete service account…</a></div>`,
  });
}

export function confirmDeleteServiceAccountPage(o: Common & { account: ServiceAccount }): string {
  const a = o.account;
  return confirmationPage({
    title: 'Delete service account',
    heading: `Delete “${a.name}”?`,
    consequences: `Every token it holds stops working at once, and its client ID and secret can no longer act for ${a.organizerName}. This cannot be undone.`,
    action: `/service-accounts/${a.id}/delete`,
    button: 'Delete service account',
    cancelHref: `/service-accounts/${a.id}`,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'service-accounts',
  });
}

export function confirmRevokeServiceAccountTokensPage(o: Common & { account: ServiceAccount }): string {
  const a = o.account;
  return confirmationPage({
    title: 'Revoke tokens',
    heading: `Revoke the tokens of “${a.name}”?`,
    consequences: 'Every token it holds stops working at once. Its secret keeps working: the program gets a new token on its next request.',
    action: `/service-accounts/${a.id}/revoke`,
    button: 'Revoke tokens',
    cancelHref: `/service-accounts/${a.id}`,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'service-accounts',
  });
}
