import { DOMAIN_EVENT_DESCRIPTIONS, DOMAIN_EVENT_TYPES } from '../events/domain-events.js';
import type { SignedInUser } from '../web/page-sessions.js';
import type { WebhookDelivery, WebhookEndpoint, WebhookOwner } from '../webhooks/webhook-endpoints.service.js';
import type { WebhookDeliveryState } from '../webhooks/webhook-states.js';
import { html, SafeHtml } from '../web/html.js';
import { fieldError } from '../web/layout.js';

// Pieces the webhook pages share: badges, times, the endpoint form's fields.

export interface Common {
  signedIn: SignedInUser;
  csrfToken: string;
}

/** Where the integrators' guide (docs/webhooks.md) is shown. */
export const WEBHOOKS_GUIDE = '/webhooks/guide';

/** An owner with its name, as the pages show it. */
export interface NamedOwner {
  owner: WebhookOwner;
  name: string;
}

/** The query string (and form fields) naming an owner: `organizer=<id>` or `application=<id>`. */
export const ownerParam = (owner: WebhookOwner) =>
  owner.kind === 'organizer' ? { name: 'organizer', id: owner.organizerId } : { name: 'application', id: owner.applicationId };

export const ownerKey = (owner: WebhookOwner) => `${owner.kind}-${ownerParam(owner).id}`;

export const ownerKindLabel = (owner: WebhookOwner) => (owner.kind === 'organizer' ? 'Organizer' : 'Application');

/** A time in full: `2026-11-26 09:15:42 UTC`, machine-readable in `datetime`. */
export function when(date: Date | null): SafeHtml {
  if (!date) return html`<span class="muted">—</span>`;
  const iso = new Date(date).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')} UTC</time>`;
}

const ENDPOINT_STATES = {
  active: { label: 'Active', tone: 'ok' },
  paused: { label: 'Paused', tone: 'idle' },
  disabled: { label: 'Disabled', tone: 'bad' },
} as const;

export function endpointBadge(endpoint: WebhookEndpoint): SafeHtml {
  const state = ENDPOINT_STATES[endpoint.state];
  return html`<span class="badge ${state.tone}">${state.label}</span>`;
}

/** The state and, when the service disabled it, why: the badge and the reason in words. */
export function endpointState(endpoint: WebhookEndpoint): SafeHtml {
  return endpoint.state === 'disabled' && endpoint.disabledReason
    ? html`${endpointBadge(endpoint)} <span class="state-reason">${endpoint.disabledReason}</span>`
    : endpointBadge(endpoint);
}

const DELIVERY_STATES: Record<WebhookDeliveryState, { label: string; tone: string }> = {
  scheduled: { label: 'Scheduled', tone: 'idle' },
  queued: { label: 'Sending', tone: 'idle' },
  succeeded: { label: 'Succeeded', tone: 'ok' },
  failed: { label: 'Failed', tone: 'bad' },
  skipped: { label: 'Skipped', tone: 'idle' },
};

export function deliveryBadge(delivery: WebhookDelivery): SafeHtml {
  const state = DELIVERY_STATES[delivery.state];
  // A delivery waiting for its next try after a failure is retrying, not merely scheduled.
  const label = delivery.state === 'scheduled' && delivery.attempts > 0 ? 'Retrying' : state.label;
  return html`<span class="badge ${state.tone}">${label}</span>`;
}

/** The event types as tags; every type reads as such rather than ten tags. */
export function eventTypeTags(types: readonly string[]): SafeHtml {
  if (DOMAIN_EVENT_TYPES.every((type) => types.includes(type))) return html`<span class="tag">every event type</span>`;
  return html`${types.map((type) => html`<span class="tag">${type}</span>`)}`;
}

/** The endpoint form's values as typed. */
export interface EndpointFormValues {
  url: string;
  description: string;
  eventTypes: string[];
}

/** Errors of the endpoint form, by field; what belongs to no field is shown above the form. */
export type EndpointFormErrors = Record<string, string>;

const FIELDS = ['url', 'description', 'eventTypes'];

/** The errors no field of the endpoint form shows, in one message. */
export function formLevelError(errors: EndpointFormErrors): string | undefined {
  const rest = Object.entries(errors)
    .filter(([field]) => !FIELDS.includes(field))
    .map(([, message]) => message);
  return rest.length ? rest.join(' ') : undefined;
}

function eventTypeChecks(chosen: string[], error: string | undefined) {
  return html`<fieldset class="checks event-types" aria-describedby="event-types-hint${error ? ' event-types-error' : ''}">
      <legend><strong>Event types</strong></legend>
      <label class="select-all" hidden
        ><input type="checkbox" data-select-all="event_types" /><span><strong>Select all</strong></span></label
      >
      ${DOMAIN_EVENT_TYPES.map(
        (type) =>
          html`<label
            ><input type="checkbox" name="event_types" value="${type}" ${chosen.includes(type) ? 'checked' : ''} /><span
              ><code>${type}</code> — ${DOMAIN_EVENT_DESCRIPTIONS[type]}</span
            ></label
          >`,
      )}
    </fieldset>
    <p class="hint" id="event-types-hint">At least one. Each delivery carries ids and the API address to fetch the current state.</p>
    ${fieldError(error, 'event-types')}`;
}

/** URL, description and event types: the same fields to add an endpoint and to edit it. */
export function endpointFields(values: EndpointFormValues, errors: EndpointFormErrors, allowHttp: boolean): SafeHtml {
  return html`<label for="endpoint-url">URL</label>
    <input
      id="endpoint-url"
      name="url"
      type="url"
      inputmode="url"
      required
      maxlength="2048"
      placeholder="https://example.com/webhooks/agora"
      value="${values.url}"
      aria-describedby="endpoint-url-hint${errors.url ? ' endpoint-url-error' : ''}"
      aria-invalid="${errors.url ? 'true' : 'false'}"
    />
    <p class="hint" id="endpoint-url-hint">
      Where Agora POSTs each event, as JSON signed with the endpoint’s secret. ${allowHttp ? 'https or http.' : 'https only.'}
    </p>
    ${fieldError(errors.url, 'endpoint-url')}
    <label for="endpoint-description">Description (optional)</label>
    <textarea
      id="endpoint-description"
      name="description"
      rows="2"
      maxlength="500"
      aria-invalid="${errors.description ? 'true' : 'false'}"
      ${errors.description ? html`aria-describedby="endpoint-description-error"` : ''}
    >
${values.description}</textarea>
    ${fieldError(errors.description, 'endpoint-description')} ${eventTypeChecks(values.eventTypes, errors.eventTypes)}`;
}

/** An error above a form: what no single field explains (too many endpoints, a throttle). */
export function formAlert(message: string | undefined): SafeHtml | null {
  return message ? html`<div class="alert error" role="alert" id="form-error">${message}</div>` : null;
}
