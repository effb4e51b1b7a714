import type { DeliveryPage, WebhookAttempt, WebhookDelivery, WebhookEndpoint } from '../webhooks/webhook-endpoints.service.js';
import { html, SafeHtml } from '../web/html.js';
import { page } from '../web/layout.js';
import { type Common, deliveryBadge, when } from './webhooks.parts.js';

/** Deliveries per page of the log. */
export const DELIVERIES_PER_PAGE = 20;

/** The endpoint's delivery log: one page, newest first, and the way to older ones. */
export function deliveryLog(o: { endpointId: string; page: DeliveryPage; after?: string }): SafeHtml {
  const base = `/webhooks/${o.endpointId}`;
  const pager = html`<nav class="pager" aria-label="Delivery log pages">
    ${o.after ? html`<a class="button secondary" href="${base}#deliveries">← Newest</a>` : null}
    ${
      o.page.hasNextPage && o.page.endCursor
        ? html`<a class="button secondary" id="older-deliveries" href="${base}?after=${encodeURIComponent(o.page.endCursor)}#deliveries"
            >Older deliveries →</a
          >`
        : null
    }
  </nav>`;
  if (o.page.items.length === 0) {
    return html`<p class="empty" id="no-deliveries">
        ${o.after ? 'No older deliveries.' : 'Nothing delivered yet. Send a test event to see one here.'}
      </p>
      ${o.after ? pager : null}`;
  }
  return html`<table class="stack deliveries">
      <thead>
        <tr>
          <th scope="col">Event type</th>
          <th scope="col">Webhook ID</th>
          <th scope="col">State</th>
          <th scope="col">Attempts</th>
          <th scope="col">Last attempt</th>
          <th scope="col">Next attempt</th>
        </tr>
      </thead>
      <tbody>
        ${o.page.items.map(
          (d) =>
            html`<tr>
              <td class="row-title" data-label="Event type"><a href="${base}/deliveries/${d.id}">${d.eventType}</a></td>
              <td data-label="Webhook ID"><code class="webhook-id">${d.webhookId}</code></td>
              <td data-label="State">${deliveryBadge(d)}</td>
              <td data-label="Attempts">${d.attempts}</td>
              <td class="date" data-label="Last attempt">${when(d.lastAttemptAt)}</td>
              <td class="date" data-label="Next attempt">${d.state === 'scheduled' ? when(d.nextAttemptAt) : when(null)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${pager}`;
}

/** The exact body sent, indented when it is JSON (it always is; a body that is not is shown as it is). */
export function prettyJson(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

const TRIGGERS = { automatic: 'Automatic', redelivery: 'Redelivery', test: 'Test event' } as const;

function attemptCard(a: WebhookAttempt): SafeHtml {
  return html`<section class="card attempt" id="attempt-${a.number}">
    <h3 class="subsection">
      Attempt ${a.number}
      <span class="badge ${a.outcome === 'succeeded' ? 'ok' : 'bad'}">${a.outcome === 'succeeded' ? 'Succeeded' : 'Failed'}</span>
    </h3>
    <dl class="profile">
      <dt>Trigger</dt>
      <dd>${TRIGGERS[a.trigger]}</dd>
      <dt>Started</dt>
      <dd>${when(a.startedAt)}</dd>
      <dt>Duration</dt>
      <dd>${a.durationMs} ms</dd>
      <dt>Response status</dt>
      <dd>${a.responseStatus === null ? html`<span class="muted">none</span>` : html`<code>${a.responseStatus}</code>`}</dd>
      ${
        a.error
          ? html`<dt>Error</dt>
              <dd class="attempt-error">${a.error}</dd>`
          : null
      }
    </dl>
    ${
      a.responseBody
        ? html`<p class="hint">Response (first 2,048 characters)</p>
            <pre class="payload response">${a.responseBody}</pre>`
        : null
    }
  </section>`;
}

export function deliveryPage(
  o: Common & {
    endpoint: WebhookEndpoint;
    delivery: WebhookDelivery;
    attempts: WebhookAttempt[];
    notice?: string;
    /** The redelivery refused (throttled), shown at the top. */
    problem?: string;
  },
): string {
  const d = o.delivery;
  const e = o.endpoint;
  return page({
    title: `Delivery ${d.webhookId}`,
    user: o.signedIn.user,
    csrfToken: o.csrfToken,
    current: 'webhooks',
    notice: o.notice,
    body: html`<p>
        <a href="/webhooks/${e.id}#deliveries">← <code class="url">${e.url}</code></a>
      </p>
      <h1>${d.eventType}</h1>
      <p class="lead"><code class="webhook-id">${d.webhookId}</code> · ${deliveryBadge(d)}</p>
      ${o.problem ? html`<div class="alert error" role="alert" id="action-error">${o.problem}</div>` : null}
      <div class="card">
        <dl class="profile">
          <dt>Webhook ID</dt>
          <dd><code>${d.webhookId}</code></dd>
          <dt>State</dt>
          <dd id="delivery-state">${deliveryBadge(d)}</dd>
          <dt>Attempts</dt>
          <dd>${d.attempts}</dd>
          <dt>Created</dt>
          <dd>${when(d.createdAt)}</dd>
          <dt>Last attempt</dt>
          <dd>${when(d.lastAttemptAt)}</dd>
          <dt>Next attempt</dt>
          <dd>${d.state === 'scheduled' ? when(d.nextAttemptAt) : when(null)}</dd>
        </dl>
        <form method="post" action="/webhooks/${e.id}/deliveries/${d.id}/redeliver">
          <input type="hidden" name="_csrf" value="${o.csrfToken}" />
          <div class="actions"><button type="submit" class="secondary">Redeliver</button></div>
        </form>
        <p class="hint">
          Sends this body once more now, with the same <code>webhook-id</code> (a receiver that deduplicates sees it as the same event) and
          a fresh timestamp and signature. It does not restart the retries.
        </p>
      </div>
      <h2 class="section" id="attempts">Attempts</h2>
      ${o.attempts.length ? o.attempts.map(attemptCard) : html`<p class="empty">No attempt yet.</p>`}
      <h2 class="section" id="request-body">Request body</h2>
      <pre class="payload" id="request-body-json">${prettyJson(d.requestBody)}</pre>`,
  });
}
