import { unverifiedNotice } from '../account-links/account-links.pages.js';
import { SCOPES, ScopeName } from '../auth/scopes.js';
import { ACCESS_TOKEN_FORMATS, type Application, CLIENT_TYPES, type ClientType } from '../oauth/clients/application.model.js';
import { SIGNING_ALGS } from '../oauth/keys/signing-algorithms.js';
import { MAX_PROFILE_LENGTH } from '../oauth/clients/application-validation.js';
import type { AuthorizedApplication } from '../oauth/consent/grants.service.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { isoDay } from '../web/form-values.js';
import { html } from '../web/html.js';
import { confirmationPage, fieldError, page } from '../web/layout.js';
import {
  authenticationChoice,
  confidentialAuthentication,
  type CredentialFormValues,
  credentialValues,
  keySettings,
  secretsSection,
} from './application-credentials.pages.js';

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

const CLIENT_TYPE_LABELS: Record<ClientType, string> = {
  confidential: 'Confidential — a server-side web app that can keep a secret',
  public: 'Public — a single-page, mobile, desktop or command-line app: no secret, PKCE only',
};

/** The form's values, as typed (URIs one per line). */
export interface ApplicationFormValues {
  name: string;
  redirectUris: string;
  postLogoutRedirectUris: string;
  /** Empty: none. */
  backchannelLogoutUri: string;
  scopes: string[];
  clientUri: string;
  logoUri: string;
  description: string;
  /** `public` or `pairwise` (OpenID Connect subject identifier types). */
  subjectType: string;
  /** Only on an application's settings form: the token settings (registering takes the defaults). */
  idTokenSignedResponseAlg?: string;
  accessTokenFormat?: string;
}

const SIGNING_ALG_LABELS: Record<(typeof SIGNING_ALGS)[number], string> = {
  RS256: 'RS256 — RSA, what every library supports (default)',
  ES256: 'ES256 — ECDSA on P-256: shorter tokens',
  EdDSA: 'EdDSA — Ed25519: shortest and fastest, where the library supports it',
};

const SUBJECT_TYPE_LABELS: Record<Application['subjectType'], string> = {
  public: 'Public — the user’s Agora id, the same in every application (default)',
  pairwise: 'Pairwise — a value of this application’s own, so applications on other hosts cannot link their users to yours',
};

const ACCESS_TOKEN_FORMAT_LABELS: Record<(typeof ACCESS_TOKEN_FORMATS)[number], string> = {
  opaque: 'Opaque — only Agora reads them (introspection); they live an hour (default)',
  jwt: 'JWT (RFC 9068) — your own resource servers verify them with the JWKS; they live minutes',
};

function radios(o: {
  legend: string;
  name: string;
  id: string;
  choices: Record<string, string>;
  chosen: string;
  hint: string;
  error?: string;
}) {
  return html`<fieldset class="checks" aria-describedby="${o.id}-hint${o.error ? ` ${o.id}-error` : ''}">
      <legend><strong>${o.legend}</strong></legend>
      ${Object.entries(o.choices).map(
        ([value, label]) =>
          html`<label
            ><input type="radio" name="${o.name}" value="${value}" ${o.chosen === value ? 'checked' : ''} /><span>${label}</span></label
          >`,
      )}
    </fieldset>
    <p class="hint" id="${o.id}-hint">${o.hint}</p>
    ${fieldError(o.error, o.id)}`;
}

/** How the application's tokens are signed and what its access tokens are (docs/oauth.md, "Signing keys", "JWT access tokens"). */
function tokenSettings(values: ApplicationFormValues, errors: Record<string, string> = {}) {
  return html`${radios({
    legend: 'ID token signing algorithm',
    name: 'id_token_signed_response_alg',
    id: 'id-token-alg',
    choices: SIGNING_ALG_LABELS,
    chosen: values.idTokenSignedResponseAlg ?? 'RS256',
    hint: 'Also signs its JWT access tokens. Tell your OpenID Connect library the same (id_token_signed_response_alg).',
    error: errors.idTokenSignedResponseAlg,
  })}
  ${radios({
    legend: 'Access token format',
    name: 'access_token_format',
    id: 'access-token-format',
    choices: ACCESS_TOKEN_FORMAT_LABELS,
    chosen: values.accessTokenFormat ?? 'opaque',
    hint: 'Tokens already issued keep their format until they expire. Refresh tokens are always opaque.',
    error: errors.accessTokenFormat,
  })}`;
}

/** Chosen once, when registering: the type decides how the client authenticates, so it never changes. */
function clientTypeChoice(chosen: string, error: string | undefined) {
  return html`<fieldset class="checks" aria-describedby="client-type-hint${error ? ' client-type-error' : ''}">
      <legend><strong>Type</strong></legend>
      ${CLIENT_TYPES.map(
        (type) =>
          html`<label
            ><input type="radio" name="client_type" value="${type}" ${chosen === type ? 'checked' : ''} /><span
              >${CLIENT_TYPE_LABELS[type]}</span
            ></label
          >`,
      )}
    </fieldset>
    <p class="hint" id="client-type-hint">The type cannot be changed after registering.</p>
    ${fieldError(error, 'client-type')}`;
}

function uriList(o: { id: string; name: string; label: string; value: string; hint: string; error?: string; required: boolean }) {
  return html`<label for="${o.id}">${o.label}</label>
    <textarea
      id="${o.id}"
      name="${o.name}"
      rows="3"
      ${o.required ? 'required' : ''}
      aria-describedby="${o.id}-hint"
      aria-invalid="${o.error ? 'true' : 'false'}"
    >
${o.value}</textarea>
    <p class="hint" id="${o.id}-hint">${o.hint}</p>
    ${fieldError(o.error, o.id)}`;
}

/** An optional web address of the application's profile (homepage, logo). */
function webAddress(o: { id: string; name: string; label: string; value: string; hint: string; error?: string }) {
  return html`<label for="${o.id}">${o.label}</label>
    <input
      id="${o.id}"
      name="${o.name}"
      type="url"
      inputmode="url"
      maxlength="${MAX_PROFILE_LENGTH}"
      placeholder="https://"
      value="${o.value}"
      aria-describedby="${o.id}-hint"
      aria-invalid="${o.error ? 'true' : 'false'}"
    />
    <p class="hint" id="${o.id}-hint">${o.hint}</p>
    ${fieldError(o.error, o.id)}`;
}

/** What users see of the application beside its name on the consent page: description, homepage, logo. */
function profileFields(values: ApplicationFormValues, errors: Record<string, string>) {
  return html`<label for="app-description">Description (optional)</label>
    <textarea
      id="app-description"
      name="description"
      rows="2"
      maxlength="${MAX_PROFILE_LENGTH}"
      aria-describedby="app-description-hint"
      aria-invalid="${errors.description ? 'true' : 'false'}"
    >
${values.description}</textarea>
    <p class="hint" id="app-description-hint">What the application does, shown to users on the consent page. Up to 500 characters.</p>
    ${fieldError(errors.description, 'app-description')}
    ${webAddress({
      id: 'app-client-uri',
      name: 'client_uri',
      label: 'Homepage URL (optional)',
      value: values.clientUri,
      error: errors.clientUri,
      hint: 'Shown to users as a link on the consent page: https, or http for localhost.',
    })}
    ${webAddress({
      id: 'app-logo-uri',
      name: 'logo_uri',
      label: 'Logo URL (optional)',
      value: values.logoUri,
      error: errors.logoUri,
      hint: 'The https address of a square image, shown at 48 × 48 pixels on the consent page.',
    })}`;
}

/** Name, profile, redirect URIs, post-logout redirect URIs and scopes: the same fields to register an application and to edit it. */
function applicationFields(values: ApplicationFormValues, errors: Record<string, string> = {}) {
  return html`<label for="app-name">Name</label>
    <input id="app-name" name="name" type="text" required value="${values.name}" aria-invalid="${errors.name ? 'true' : 'false'}" />
    ${fieldError(errors.name, 'app-name')} ${profileFields(values, errors)}
    ${uriList({
      id: 'redirect-uris',
      name: 'redirect_uris',
      label: 'Redirect URIs',
      value: values.redirectUris,
      required: true,
      error: errors.redirectUris,
      hint: 'One per line, matched exactly (an error names its line): https, or http for localhost. Public clients may also use http://127.0.0.1/… or http://[::1]/…, matched on any port, and a private-use scheme in reverse domain form for native apps, such as com.example.app:/callback. A public client’s single-page app may call the token endpoint and the API from the origins of its redirect URIs.',
    })}
    ${uriList({
      id: 'post-logout-redirect-uris',
      name: 'post_logout_redirect_uris',
      label: 'Post-logout redirect URIs (optional)',
      value: values.postLogoutRedirectUris,
      required: false,
      error: errors.postLogoutRedirectUris,
      hint: 'One per line: where the application may send users back to after signing them out of Agora. Same rules as redirect URIs.',
    })}
    <label for="backchannel-logout-uri">Back-channel logout URI (optional)</label>
    <input
      id="backchannel-logout-uri"
      name="backchannel_logout_uri"
      type="url"
      value="${values.backchannelLogoutUri}"
      aria-describedby="backchannel-logout-uri-hint"
      aria-invalid="${errors.backchannelLogoutUri ? 'true' : 'false'}"
    />
    <p class="hint" id="backchannel-logout-uri-hint">
      Where Agora posts a logout token when a user signs out of a session in which the application signed them in (OpenID Connect
      Back-Channel Logout). https, or http for localhost.
    </p>
    ${fieldError(errors.backchannelLogoutUri, 'backchannel-logout-uri')}
    ${radios({
      legend: 'Subject identifiers (the sub claim)',
      name: 'subject_type',
      id: 'subject-type',
      choices: SUBJECT_TYPE_LABELS,
      chosen: values.subjectType || 'public',
      hint: 'Pairwise subjects are computed from the host of the redirect URIs (the sector), so all of them must be on one host. Once the application has issued tokens, neither the subject type nor a pairwise application’s host can change: every user’s sub would change with it.',
      error: errors.subjectType,
    })}
    ${scopeChecks(values.scopes)} ${fieldError(errors.scopes, 'scopes')}`;
}

function typeName(type: ClientType): string {
  return type === 'public' ? 'Public' : 'Confidential';
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
    values?: Partial<ApplicationFormValues> & { clientType?: string; credentials?: CredentialFormValues };
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
                  <th scope="col">Type</th>
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
                      <td data-label="Type">${typeName(a.clientType)}</td>
                      <td data-label="Application ID"><code>${a.clientId}</code></td>
                      <td data-label="Scopes">${tags(a.scopes)}</td>
                      <td class="date" data-label="Created">${isoDay(a.createdAt)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
      <h2 class="section">Register an application</h2>
      ${
        o.signedIn.user.emailVerified
          ? null
          : unverifiedNotice({
              csrfToken: o.csrfToken,
              email: o.signedIn.user.email,
              returnTo: '/applications',
              what: 'register applications',
            })
      }
      <div class="card" ${o.signedIn.user.emailVerified ? '' : html`hidden`}>
        <form method="post" action="/applications" novalidate>
          <input type="hidden" name="_csrf" value="${o.csrfToken}" />
          ${clientTypeChoice(values.clientType ?? 'confidential', o.errors?.clientType)}
          ${authenticationChoice(values.credentials ?? { method: 'client_secret_basic', jwks: '', jwksUri: '' }, o.errors)}
          ${applicationFields(
            {
              name: values.name ?? '',
              redirectUris: values.redirectUris ?? '',
              postLogoutRedirectUris: values.postLogoutRedirectUris ?? '',
              backchannelLogoutUri: values.backchannelLogoutUri ?? '',
              subjectType: values.subjectType ?? 'public',
              scopes: chosen,
              clientUri: values.clientUri ?? '',
              logoUri: values.logoUri ?? '',
              description: values.description ?? '',
            },
            o.errors,
          )}
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
    values?: ApplicationFormValues;
    credentials?: CredentialFormValues;
  },
): string {
  const a = o.application;
  const keys = a.tokenEndpointAuthMethod === 'private_key_jwt';
  const values = o.values ?? {
    name: a.name,
    redirectUris: a.redirectUris.join('\n'),
    postLogoutRedirectUris: a.postLogoutRedirectUris.join('\n'),
    backchannelLogoutUri: a.backchannelLogoutUri ?? '',
    subjectType: a.subjectType,
    scopes: a.scopes,
    idTokenSignedResponseAlg: a.idTokenSignedResponseAlg,
    accessTokenFormat: a.accessTokenFormat,
    clientUri: a.clientUri ?? '',
    logoUri: a.logoUri ?? '',
    description: a.description ?? '',
  };
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
          <dt>Type</dt>
          <dd id="client-type">
            ${
              a.clientType === 'public'
                ? html`<strong>Public</strong>: no secret; it proves itself with PKCE alone (token endpoint authentication
                    <code>none</code>).`
                : confidentialAuthentication(a)
            }
            <p class="hint">Chosen when it was registered; it cannot be changed.</p>
          </dd>
          <dt>Application ID</dt>
          <dd><code id="client-id">${a.clientId}</code></dd>
          ${
            a.description
              ? html`<dt>Description</dt>
                  <dd id="app-description-shown">${a.description}</dd>`
              : null
          }
          ${
            a.clientUri
              ? html`<dt>Homepage</dt>
                  <dd>
                    <a href="${a.clientUri}" rel="noopener noreferrer"><code>${a.clientUri}</code></a>
                  </dd>`
              : null
          }
          ${
            a.logoUri
              ? html`<dt>Logo</dt>
                  <dd><code>${a.logoUri}</code></dd>`
              : null
          }
          <dt>Redirect URIs</dt>
          <dd>${a.redirectUris.map((u) => html`<code>${u}</code><br />`)}</dd>
          ${
            a.postLogoutRedirectUris.length
              ? html`<dt>Post-logout redirect URIs</dt>
                  <dd>${a.postLogoutRedirectUris.map((u) => html`<code>${u}</code><br />`)}</dd>`
              : null
          }
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
          ${applicationFields(values, o.errors)} ${tokenSettings(values, o.errors)}
          ${keys ? keySettings(o.credentials ?? credentialValues(a), o.errors) : null}
          <div class="actions"><button type="submit">Save changes</button></div>
        </form>
      </div>
      ${secretsSection(a, o.csrfToken)}
      <h2 class="section" id="webhooks">Webhooks</h2>
      <p class="hint">
        Endpoints of this application hear of registrations, check-ins and event changes that concern the people who authorized it.
      </p>
      <div class="actions">
        <a class="button secondary" href="/webhooks#application-${a.id}">Webhook endpoints</a>
        <a class="button secondary" href="/webhooks/new?application=${a.id}">Add endpoint</a>
      </div>
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
                      <td data-label="Scopes">
                        ${tags(g.scopes)}
                        ${
                          g.resourceServers.length > 0
                            ? html`<p class="muted">Also for ${g.resourceServers.map((s) => s.name).join(', ')}</p>`
                            : null
                        }
                      </td>
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
      'Every current secret stops working at once: the application cannot exchange codes until you put the new secret in its configuration. To rotate without downtime, generate a new secret beside the current one instead. Tokens already issued keep working.',
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
