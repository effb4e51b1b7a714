import { unverifiedNotice } from '../account-links/account-links.pages.js';
import type { WebhookEndpoint } from '../webhooks/webhook-endpoints.service.js';
import { html, SafeHtml } from '../web/html.js';
import { confirmationPage, fieldError, page } from '../web/layout.js';
import {
  type Common,
  endpointBadge,
  endpointFields,
  type EndpointFormErrors,
  type EndpointFormValues,
  endpointState,
  eventTypeTags,
  formAlert,
  formLevelError,
  type NamedOwner,
  ownerKey,
  ownerKindLabel,
  ownerParam,
  WEBHOOKS_GUIDE,
} from './webhooks.parts.js';

function addHref(owner: NamedOwner['owner']): string {
  const { name, id } = ownerParam(owner);
  return `/webhooks/new?${name}=${encodeURIComponent(id)}`;
}

/** What webhooks are, for someone who has none yet. */
function explanation(hasOwners: boolean): SafeHtml {
  return html`<div class="empty" id="webhooks-empty">
    <p>
      <strong>No webhook endpoints yet.</strong> A webhook endpoint is an address of yours that Agora calls (an HTTP POST) when something
      happens: someone registers, a registration is cancelled, an attendee is checked in, an event changes. Each request is signed (Standard
      Webhooks), retried for about three days when your server does not answer, and logged here.
    </p>
    <p>
      ${
        hasOwners
          ? 'Add an endpoint to one of your organizers or applications below.'
          : 'Endpoints belong to an organizer you own or administer, or to an application you develop: create one of those first.'
      }
      How to verify the signatures, the payloads and the retries: <a href="${WEBHOOKS_GUIDE}">the webhooks guide</a>.
    </p>
  </div>`;
}

function endpointRows(endpoints: WebhookEndpoint[]): SafeHtml {
  return html`<table class="stack endpoints">
    <thead>
      <tr>
        <th scope="col">URL</th>
        <th scope="col">State</th>
        <th scope="col">Event types</th>
      </tr>
    </thead>
    <tbody>
      ${endpoints.map(
        (e) =>
          html`<tr>
            <td class="row-title" data-label="URL">
              <a href="/webhooks/${e.id}"><code class="url">${e.url}</code></a>
              ${e.description ? html`<div class="hint">${e.description}</div>` : null}
            </td>
            <td data-label="State">${endpointState(e)}</td>
            <td data-label="Event types">${eventTypeTags(e.eventTypes)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

export function webhooksPage(o: Common & { owners: NamedOwner[]; endpoints: WebhookEndpoint[]; notice?: string }): string {
  const byOwner = new Map<string, WebhookEndpoint[]>();
  for (const endpoint of o.endpoints) byOwner.set(ownerKey(endpoint.owner), [...(byOwner.get(ownerKey(endpoint.owner)) ?? []), endpoint]);
  return page({
    title: 'Webhooks',
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'webhooks',
    notice: o.notice,
    body: html`<h1>Webhooks</h1>
      <p class="lead">
        Endpoints that hear of events as they happen, for the organizers you own or administer and the applications you develop.
        <a href="${WEBHOOKS_GUIDE}">Webhooks guide</a>
      </p>
      ${o.endpoints.length === 0 ? explanation(o.owners.length > 0) : null}
      ${o.owners.map((named) => {
        const endpoints = byOwner.get(ownerKey(named.owner)) ?? [];
        return html`<section class="owner" id="${ownerKey(named.owner)}">
          <div class="owner-heading">
            <h2>${named.name} <span class="owner-kind">${ownerKindLabel(named.owner)}</span></h2>
            <a class="button secondary" href="${addHref(named.owner)}">Add endpoint</a>
          </div>
          ${endpoints.length ? endpointRows(endpoints) : html`<p class="empty">No endpoints.</p>`}
        </section>`;
      })}`,
  });
}

export function newEndpointPage(
  o: Common & {
    owner: NamedOwner;
    allowHttp: boolean;
    values?: EndpointFormValues;
    errors?: EndpointFormErrors;
  },
): string {
  const errors = o.errors ?? {};
  const param = ownerParam(o.owner.owner);
  const verified = o.signedIn.user.emailVerified;
  return page({
    title: 'Add a webhook endpoint',
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'webhooks',
    body: html`<p><a href="/webhooks">← Webhooks</a></p>
      <h1>Add a webhook endpoint</h1>
      <p class="lead">
        For ${ownerKindLabel(o.owner.owner).toLowerCase()} <strong>${o.owner.name}</strong>.
        ${
          o.owner.owner.kind === 'application'
            ? 'It hears of events concerning the people who authorized the application with the api or read_api scope.'
            : 'It hears of events of every event of this organizer.'
        }
        <a href="${WEBHOOKS_GUIDE}">Webhooks guide</a>
      </p>
      ${
        verified
          ? null
          : unverifiedNotice({
              csrfToken: o.csrfToken,
              email: o.signedIn.user.email,
              returnTo: `/webhooks/new?${param.name}=${encodeURIComponent(param.id)}`,
              what: 'add webhook endpoints',
            })
      }
      <div class="card" ${verified ? '' : html`hidden`}>
        ${formAlert(formLevelError(errors))}
        <form method="post" action="/webhooks" novalidate>
          <input type="hidden" name="_csrf" value="${o.csrfToken}" />
          <input type="hidden" name="${param.name}" value="${param.id}" />
          ${endpointFields(o.values ?? { url: '', description: '', eventTypes: [] }, errors, o.allowHttp)}
          <div class="actions"><button type="submit">Add endpoint</button></div>
        </form>
      </div>`,
  });
}

/** The secret, once, with how to check a signature. */
function secretShown(secret: string): SafeHtml {
  return html`<div class="alert ok" role="status" id="secret-shown">
    <strong>Signing secret</strong>
    <div class="secret-box">
      <code id="webhook-secret" class="secret">${secret}</code
      ><button type="button" class="secondary" data-copy="webhook-secret" hidden>Copy</button>
    </div>
    <p><strong>Copy it now: it will not be shown again.</strong> Keep it on the server that receives the webhooks.</p>
    <p>
      Check every request with a Standard Webhooks library before trusting it, for instance in Node.js with
      <code>standardwebhooks</code>: <code>new Webhook(secret).verify(rawBody, headers)</code> throws when the signature is wrong. More in
      <a href="${WEBHOOKS_GUIDE}">the webhooks guide</a>.
    </p>
  </div>`;
}

function signingStatus(e: WebhookEndpoint, now: Date): SafeHtml {
  return e.previousSecretExpiresAt && e.previousSecretExpiresAt > now
    ? html`Rotating: requests carry two signatures, the new secret’s and the previous one’s, until
        <time datetime="${e.previousSecretExpiresAt.toISOString()}"
          >${e.previousSecretExpiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC</time
        >.`
    : html`One secret, shown when it was created.`;
}

/** Send a test event, pause or resume (or enable again), rotate the secret, delete. */
function endpointActions(e: WebhookEndpoint, csrfToken: string): SafeHtml {
  const stateChange =
    e.state === 'active'
      ? { state: 'paused', label: 'Pause', hint: 'A paused endpoint gets no new deliveries until it is resumed.' }
      : {
          state: 'active',
          label: e.state === 'disabled' ? 'Enable again' : 'Resume',
          hint: 'New events are delivered again from now on; what happened meanwhile is not sent.',
        };
  return html`<div class="actions endpoint-actions">
      <form method="post" action="/webhooks/${e.id}/test">
        <input type="hidden" name="_csrf" value="${csrfToken}" />
        <button type="submit" class="secondary">Send test event</button>
      </form>
      <form method="post" action="/webhooks/${e.id}/state">
        <input type="hidden" name="_csrf" value="${csrfToken}" />
        <input type="hidden" name="state" value="${stateChange.state}" />
        <button type="submit" class="secondary" id="change-state">${stateChange.label}</button>
      </form>
      <a class="button secondary" href="/webhooks/${e.id}/secret">Rotate secret…</a>
      <a class="button danger" href="/webhooks/${e.id}/delete">Delete…</a>
    </div>
    <p class="hint">A test event (<code>webhook.test</code>) goes to this endpoint only and is not retried. ${stateChange.hint}</p>`;
}

export function endpointPage(
  o: Common & {
    endpoint: WebhookEndpoint;
    owner: NamedOwner;
    allowHttp: boolean;
    now: Date;
    /** The delivery log, rendered (webhooks.log.pages.ts). */
    log: SafeHtml;
    secret?: string;
    notice?: string;
    /** An action refused (a throttle), shown at the top. */
    problem?: string;
    values?: EndpointFormValues;
    errors?: EndpointFormErrors;
  },
): string {
  const e = o.endpoint;
  const errors = o.errors ?? {};
  return page({
    title: 'Webhook endpoint',
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'webhooks',
    notice: o.notice,
    body: html`<p><a href="/webhooks">← Webhooks</a></p>
      <h1 class="endpoint-title"><code class="url">${e.url}</code></h1>
      <p class="lead">${ownerKindLabel(e.owner)} <strong>${o.owner.name}</strong> · ${endpointBadge(e)}</p>
      ${o.problem ? html`<div class="alert error" role="alert" id="action-error">${o.problem}</div>` : null}
      ${o.secret ? secretShown(o.secret) : null}
      ${
        e.state === 'disabled'
          ? html`<div class="alert warn" role="status" id="disabled-notice">
              <strong>Disabled${e.disabledAt ? html` on ${e.disabledAt.toISOString().slice(0, 10)}` : null}.</strong>
              ${e.disabledReason ?? ''} Nothing is delivered to it until you enable it again.
            </div>`
          : null
      }
      <div class="card">
        <dl class="profile">
          <dt>URL</dt>
          <dd><code class="url" id="endpoint-url-shown">${e.url}</code></dd>
          ${
            e.description
              ? html`<dt>Description</dt>
                  <dd>${e.description}</dd>`
              : null
          }
          <dt>Event types</dt>
          <dd>${eventTypeTags(e.eventTypes)}</dd>
          <dt>State</dt>
          <dd id="endpoint-state">${endpointState(e)}</dd>
          <dt>Signing secret</dt>
          <dd>${signingStatus(e, o.now)}</dd>
          <dt>Endpoint ID</dt>
          <dd><code>${e.id}</code></dd>
        </dl>
        ${endpointActions(e, o.csrfToken)}
      </div>
      <h2 class="section" id="deliveries">Deliveries</h2>
      ${o.log}
      <h2 class="section" id="settings">Settings</h2>
      <div class="card">
        ${formAlert(formLevelError(errors))}
        <form method="post" action="/webhooks/${e.id}" novalidate>
          <input type="hidden" name="_csrf" value="${o.csrfToken}" />
          ${endpointFields(o.values ?? { url: e.url, description: e.description, eventTypes: e.eventTypes }, errors, o.allowHttp)}
          <div class="actions"><button type="submit">Save changes</button></div>
        </form>
      </div>`,
  });
}

/** How long the current secret keeps signing beside the new one. */
export const ROTATION_CHOICES = [
  { hours: 0, label: 'Stop at once: only the new secret signs from now on' },
  { hours: 1, label: '1 hour' },
  { hours: 24, label: '24 hours' },
  { hours: 168, label: '7 days' },
] as const;

export function rotateSecretPage(o: Common & { endpoint: WebhookEndpoint; chosen?: number; error?: string }): string {
  const e = o.endpoint;
  const chosen = o.chosen ?? 24;
  return page({
    title: 'Rotate the signing secret',
    narrow: true,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'webhooks',
    body: html`<div class="card">
      <h1>Rotate the signing secret?</h1>
      <p>
        A new secret is made and shown once. For a while each request can carry two signatures, the new secret’s and the current one’s, so
        your receiver keeps working until you have put the new secret in its configuration.
      </p>
      <p class="hint"><code class="url">${e.url}</code></p>
      <form method="post" action="/webhooks/${e.id}/secret">
        <input type="hidden" name="_csrf" value="${o.csrfToken}" />
        <fieldset class="checks" ${o.error ? html`aria-describedby="previous-valid-hours-error"` : ''}>
          <legend><strong>The current secret keeps signing for</strong></legend>
          ${ROTATION_CHOICES.map(
            (c) =>
              html`<label
                ><input type="radio" name="previous_valid_hours" value="${c.hours}" ${c.hours === chosen ? 'checked' : ''} /><span
                  >${c.label}</span
                ></label
              >`,
          )}
        </fieldset>
        ${fieldError(o.error, 'previous-valid-hours')}
        <div class="actions stretch">
          <a class="button secondary" href="/webhooks/${e.id}">Cancel</a>
          <button type="submit" class="danger">Rotate secret</button>
        </div>
      </form>
    </div>`,
  });
}

export function confirmDeleteEndpointPage(o: Common & { endpoint: WebhookEndpoint }): string {
  const e = o.endpoint;
  return confirmationPage({
    title: 'Delete webhook endpoint',
    heading: 'Delete this webhook endpoint?',
    consequences: html`Nothing more is sent to <code class="url">${e.url}</code>, and its delivery log is deleted with it. This cannot be
      undone.`,
    action: `/webhooks/${e.id}/delete`,
    button: 'Delete endpoint',
    cancelHref: `/webhooks/${e.id}`,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'webhooks',
  });
}

/** docs/webhooks.md as it is, for integrators reading it from the dashboard. */
export function guidePage(o: { user: { username: string; name: string } | null; csrfToken: string; guide: SafeHtml }): string {
  return page({
    title: 'Webhooks guide',
    user: o.user,
    csrfToken: o.csrfToken,
    current: 'webhooks',
    body: html`${o.user ? html`<p><a href="/webhooks">← Webhooks</a></p>` : null}
      <article class="doc">${o.guide}</article>`,
  });
}
