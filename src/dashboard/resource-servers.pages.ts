import { unverifiedNotice } from '../account-links/account-links.pages.js';
import { RESOURCE_SERVER_TOKEN_FORMATS, type ResourceServerTokenFormat } from '../oauth/resources/resource-server.model.js';
import type { ResourceServer } from '../oauth/resources/resource-server.model.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { isoDay } from '../web/form-values.js';
import { html } from '../web/html.js';
import { confirmationPage, fieldError, page } from '../web/layout.js';

interface Common {
  signedIn: SignedInUser;
  csrfToken: string;
}

/** What was typed in the form, to show it again with its errors. */
export interface ResourceServerFormValues {
  name: string;
  identifier: string;
  accessTokenFormat: string;
}

const FORMAT_LABELS: Record<ResourceServerTokenFormat, string> = {
  jwt: 'JWT (RFC 9068) — your server verifies them offline against the JWKS; they live minutes (default)',
  opaque: 'Opaque — your server asks Agora about each one (introspection with the credential below)',
};

const FORMAT_NAMES: Record<ResourceServerTokenFormat, string> = { jwt: 'JWT', opaque: 'Opaque' };

/** The resource servers the user registered, and the form that registers one. */
export function resourceServersPage(
  o: Common & {
    servers: ResourceServer[];
    baseUrl: string;
    notice?: string;
    errors?: Record<string, string>;
    values?: ResourceServerFormValues;
  },
): string {
  const values = o.values ?? { name: '', identifier: '', accessTokenFormat: 'jwt' };
  const errors = o.errors ?? {};
  return page({
    title: 'Resource servers',
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'resource-servers',
    notice: o.notice,
    body: html`<h1>Your resource servers</h1>
      <p class="lead">
        APIs of your own that take Agora's access tokens (RFC 8707). Applications ask for a token for one by sending its identifier as
        <code>resource</code>; the token then carries it as its audience, and Agora's own API refuses it.
      </p>
      ${
        o.servers.length === 0
          ? html`<p class="empty">You have not registered a resource server yet.</p>`
          : html`<table class="stack">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Identifier</th>
                  <th scope="col">Tokens</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                ${o.servers.map(
                  (s) =>
                    html`<tr>
                      <td class="row-title" data-label="Name"><a href="/resource-servers/${s.id}">${s.name}</a></td>
                      <td data-label="Identifier"><code class="url">${s.identifier}</code></td>
                      <td data-label="Tokens">${FORMAT_NAMES[s.accessTokenFormat]}</td>
                      <td class="date" data-label="Created">${isoDay(s.createdAt)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
      <h2 class="section">Register a resource server</h2>
      ${
        o.signedIn.user.emailVerified
          ? null
          : unverifiedNotice({
              csrfToken: o.csrfToken,
              email: o.signedIn.user.email,
              returnTo: '/resource-servers',
              what: 'register resource servers',
            })
      }
      <div class="card" ${o.signedIn.user.emailVerified ? '' : html`hidden`}>
        <form method="post" action="/resource-servers" novalidate>
          <input type="hidden" name="_csrf" value="${o.csrfToken}" />
          <label for="rs-name">Name</label>
          <input
            id="rs-name"
            name="name"
            type="text"
            required
            maxlength="100"
            value="${values.name}"
            aria-describedby="rs-name-hint"
            aria-invalid="${errors.name ? 'true' : 'false'}"
          />
          <p class="hint" id="rs-name-hint">
            Shown to users on the consent page, with your name, when an application asks for a token for it.
          </p>
          ${fieldError(errors.name, 'rs-name')}
          <label for="rs-identifier">Identifier</label>
          <input
            id="rs-identifier"
            name="identifier"
            type="url"
            inputmode="url"
            required
            placeholder="https://api.example.com"
            value="${values.identifier}"
            aria-describedby="rs-identifier-hint"
            aria-invalid="${errors.identifier ? 'true' : 'false'}"
          />
          <p class="hint" id="rs-identifier-hint">
            The URI applications send as <code>resource</code> and tokens carry as <code>aud</code>, character for character: https (http
            only for localhost), no query, no fragment, and not ${o.baseUrl} (Agora's own API). It cannot be changed later.
          </p>
          ${fieldError(errors.identifier, 'rs-identifier')}
          <fieldset class="checks" aria-describedby="rs-format-hint${errors.accessTokenFormat ? ' rs-format-error' : ''}">
            <legend><strong>Access token format</strong></legend>
            ${RESOURCE_SERVER_TOKEN_FORMATS.map(
              (format) =>
                html`<label
                  ><input
                    type="radio"
                    name="access_token_format"
                    value="${format}"
                    ${values.accessTokenFormat === format ? 'checked' : ''}
                  /><span>${FORMAT_LABELS[format]}</span></label
                >`,
            )}
          </fieldset>
          <p class="hint" id="rs-format-hint">Applications whose own format is JWT get JWTs for it either way.</p>
          ${fieldError(errors.accessTokenFormat, 'rs-format')}
          <div class="actions"><button type="submit">Register resource server</button></div>
        </form>
      </div>`,
  });
}

export function resourceServerPage(o: Common & { server: ResourceServer; baseUrl: string; secret?: string; notice?: string }): string {
  const s = o.server;
  return page({
    title: s.name,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'resource-servers',
    notice: o.notice,
    body: html`<p><a href="/resource-servers">← Resource servers</a></p>
      <h1>${s.name}</h1>
      ${
        o.secret
          ? html`<div class="alert ok" role="status">
              <strong>Introspection secret</strong>
              <div class="secret-box">
                <code id="introspection-secret" class="secret">${o.secret}</code
                ><button type="button" class="secondary" data-copy="introspection-secret" hidden>Copy</button>
              </div>
              <strong>Copy it now: it will not be shown again.</strong> Keep it on the resource server that uses it.
            </div>`
          : null
      }
      <div class="card">
        <dl class="profile">
          <dt>Identifier (<code>resource</code>, <code>aud</code>)</dt>
          <dd><code class="url" id="identifier">${s.identifier}</code></dd>
          <dt>Access tokens</dt>
          <dd>${FORMAT_NAMES[s.accessTokenFormat]}</dd>
          <dt>Introspection client ID</dt>
          <dd><code class="url" id="introspection-id">${s.introspectionId}</code></dd>
          <dt>Introspection URL</dt>
          <dd><code class="url">${o.baseUrl}/oauth/introspect</code></dd>
          <dt>JWKS</dt>
          <dd><code class="url">${o.baseUrl}/oauth/discovery/keys</code></dd>
          <dt>Created</dt>
          <dd class="date">${isoDay(s.createdAt)}</dd>
        </dl>
      </div>
      <h2 class="section">Introspection secret</h2>
      <p class="hint">A new secret replaces the old one, which stops working at once.</p>
      <div class="actions"><a class="button secondary" href="/resource-servers/${s.id}/secret">Regenerate secret…</a></div>
      <h2 class="section">Delete</h2>
      <p class="hint">Applications can no longer ask for it, and every token issued for it is revoked.</p>
      <div class="actions"><a class="button danger" href="/resource-servers/${s.id}/delete">Delete resource server…</a></div>`,
  });
}

export function confirmRegenerateResourceServerSecretPage(o: Common & { server: ResourceServer }): string {
  const s = o.server;
  return confirmationPage({
    title: 'Regenerate secret',
    heading: `Regenerate the introspection secret of “${s.name}”?`,
    consequences:
      'The current secret stops working at once: the resource server cannot introspect tokens until you put the new secret in its configuration. Tokens already issued keep working.',
    action: `/resource-servers/${s.id}/secret`,
    button: 'Regenerate secret',
    cancelHref: `/resource-servers/${s.id}`,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'resource-servers',
  });
}

export function confirmDeleteResourceServerPage(o: Common & { server: ResourceServer }): string {
  const s = o.server;
  return confirmationPage({
    title: 'Delete resource server',
    heading: `Delete “${s.name}”?`,
    consequences: `Applications can no longer ask for tokens for ${s.identifier}, every token issued for it is revoked, and its introspection credential stops working. This cannot be undone.`,
    action: `/resource-servers/${s.id}/delete`,
    button: 'Delete resource server',
    cancelHref: `/resource-servers/${s.id}`,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'resource-servers',
  });
}
