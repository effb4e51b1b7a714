import type { Application } from '../oauth/clients/application.model.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { isoDay } from '../web/form-values.js';
import { html } from '../web/html.js';
import { confirmationPage, fieldError } from '../web/layout.js';

/** How a confidential client authenticates, as typed on the forms. */
export interface CredentialFormValues {
  method: string;
  jwks: string;
  jwksUri: string;
}

/** The public keys of a private_key_jwt client: a JWK Set pasted in, or the address it is published at. */
function keyFields(values: CredentialFormValues, errors: Record<string, string>) {
  return html`<label for="jwks-uri">JWKS URI</label>
    <input
      id="jwks-uri"
      name="jwks_uri"
      type="url"
      value="${values.jwksUri}"
      aria-describedby="jwks-uri-hint"
      aria-invalid="${errors.jwksUri ? 'true' : 'false'}"
    />
    <p class="hint" id="jwks-uri-hint">Where your application publishes its public keys (https); Agora fetches and caches them.</p>
    ${fieldError(errors.jwksUri, 'jwks-uri')}
    <label for="jwks">…or the public keys themselves (JWK Set)</label>
    <textarea id="jwks" name="jwks" rows="4" aria-describedby="jwks-hint" aria-invalid="${errors.jwks ? 'true' : 'false'}">
${values.jwks}</textarea>
    <p class="hint" id="jwks-hint">
      <code>{"keys":[…]}</code>: RSA, EC (P-256) or Ed25519 public keys, at most 10. Give one of the two, never a private key.
    </p>
    ${fieldError(errors.jwks, 'jwks')}`;
}

/** On the registration form: a secret (the default) or public keys, for confidential clients. */
export function authenticationChoice(values: CredentialFormValues, errors: Record<string, string> = {}) {
  const keys = values.method === 'private_key_jwt';
  return html`<fieldset class="checks">
      <legend><strong>Client authentication (confidential applications)</strong></legend>
      <label
        ><input type="radio" name="token_endpoint_auth_method" value="client_secret_basic" ${keys ? '' : 'checked'} /><span
          >A client secret, shown once (<code>client_secret_basic</code> or <code>client_secret_post</code>)</span
        ></label
      >
      <label
        ><input type="radio" name="token_endpoint_auth_method" value="private_key_jwt" ${keys ? 'checked' : ''} /><span
          >Public keys: the application signs an assertion with its private key (<code>private_key_jwt</code>), no shared secret</span
        ></label
      >
    </fieldset>
    ${fieldError(errors.tokenEndpointAuthMethod, 'auth-method')} ${keyFields(values, errors)}`;
}

/** On the settings form of a private_key_jwt client: its keys, changeable. */
export function keySettings(values: CredentialFormValues, errors: Record<string, string> = {}) {
  return html`<input type="hidden" name="token_endpoint_auth_method" value="private_key_jwt" />${keyFields(values, errors)}`;
}

/** The form values of an application's keys as they are. */
export function credentialValues(a: Application): CredentialFormValues {
  return { method: a.tokenEndpointAuthMethod, jwks: a.jwks ? JSON.stringify(a.jwks, null, 2) : '', jwksUri: a.jwksUri ?? '' };
}

/** What the Type entry of the application's page says about a confidential client. */
export function confidentialAuthentication(a: Application) {
  return a.tokenEndpointAuthMethod === 'private_key_jwt'
    ? html`<strong>Confidential</strong>: authenticates with an assertion signed by its private key (<code>private_key_jwt</code>), checked
        against ${a.jwksUri ? html`the keys at <code>${a.jwksUri}</code>` : html`the ${a.jwks?.keys.length ?? 0} public key(s) below`}.`
    : html`<strong>Confidential</strong>: authenticates with its secret (<code>client_secret_basic</code> or
        <code>client_secret_post</code>).`;
}

/**
 * The secrets of a confidential client: one, or two while it rotates (as on GitHub): a new one is added
 * while the old one keeps working, then the old one is deleted.
 */
export function secretsSection(a: Application, csrfToken: string) {
  if (a.clientType !== 'confidential' || a.tokenEndpointAuthMethod === 'private_key_jwt') return null;
  const two = a.previousSecretCreatedAt !== null;
  const row = (label: string, created: Date, which: 'current' | 'previous') =>
    html`<tr id="secret-${which}">
      <td class="row-title" data-label="Secret">${label}</td>
      <td class="date" data-label="Created">${isoDay(created)}</td>
      <td class="row-action">
        ${two ? html`<a class="button danger" href="/applications/${a.id}/secrets/${which}/delete">Delete…</a>` : null}
      </td>
    </tr>`;
  return html`<h2 class="section" id="secrets">Secrets</h2>
    <p class="hint">
      To rotate without downtime: generate a new secret (the current one keeps working), put it in your application's configuration, then
      delete the old one. At most two at once.
    </p>
    <table class="stack">
      <thead>
        <tr>
          <th scope="col">Secret</th>
          <th scope="col">Created</th>
          <th scope="col"><span class="muted">Action</span></th>
        </tr>
      </thead>
      <tbody>
        ${row(two ? 'Newer secret' : 'Secret', a.secretRotatedAt ?? a.createdAt, 'current')}
        ${two ? row('Older secret', a.previousSecretCreatedAt!, 'previous') : null}
      </tbody>
    </table>
    <div class="actions">
      ${
        two
          ? null
          : html`<form method="post" action="/applications/${a.id}/secrets">
              <input type="hidden" name="_csrf" value="${csrfToken}" />
              <button type="submit" class="secondary">Generate a new secret</button>
            </form>`
      }
      <a class="button secondary" href="/applications/${a.id}/secret">Regenerate secret (replace every secret)…</a>
    </div>`;
}

export function confirmDeleteSecretPage(o: {
  signedIn: SignedInUser;
  csrfToken: string;
  application: Application;
  which: 'current' | 'previous';
}): string {
  const a = o.application;
  const created = o.which === 'current' ? (a.secretRotatedAt ?? a.createdAt) : a.previousSecretCreatedAt;
  return confirmationPage({
    title: 'Delete secret',
    heading: `Delete the ${o.which === 'current' ? 'newer' : 'older'} secret of “${a.name}”?`,
    consequences: `The secret created ${isoDay(created)} stops working at once; the other one keeps working. Tokens already issued keep working.`,
    action: `/applications/${a.id}/secrets/${o.which}/delete`,
    button: 'Delete secret',
    cancelHref: `/applications/${a.id}#secrets`,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'applications',
  });
}
