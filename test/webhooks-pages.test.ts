import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { DOMAIN_EVENT_TYPES, type DomainEventType } from '../src/events/domain-events.js';
import { OrganizersService } from '../src/events/organizers.service.js';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import type { User } from '../src/users/user.model.js';
import { WebhookEndpointsService, type WebhookOwner } from '../src/webhooks/webhook-endpoints.service.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { uniqueSlug } from './support/events.js';
import { startTestApp, TestApp } from './support/test-app.js';
import { insertDelivery } from './support/webhook-log.js';

// The dashboard's webhook pages, through HTTP as a browser sends them. Endpoints are registered with the
// operator's defaults (https, public targets only): a public address written as an IP literal needs no DNS.
const RECEIVER = 'https://93.184.215.14/hooks/agora';

let t: TestApp;
let manager: User;
let browser: Browser;
let organizer: WebhookOwner;
let application: WebhookOwner;
let orgId: string;
let appId: string;

beforeAll(async () => {
  t = await startTestApp();
  manager = await createUser(t, { name: 'Hook Manager' });
  const org = await t.get(OrganizersService).create(manager.id, { slug: uniqueSlug('hooks'), name: 'Orbit Meetups' });
  orgId = org.id;
  organizer = { kind: 'organizer', organizerId: org.id };
  const { application: app } = await t
    .get(ApplicationsService)
    .create(manager.id, { name: 'Badge Printer', redirectUris: ['https://badges.example.com/cb'], scopes: ['openid', 'api'] });
  appId = app.id;
  application = { kind: 'application', applicationId: app.id };
  browser = new Browser(t.url);
  await signIn(browser, manager.username, TEST_PASSWORD);
});
afterAll(() => t.close());

const db = () => t.get(DataSource);
const service = () => t.get(WebhookEndpointsService);

/** Another organizer of the manager's (an owner has at most 20 endpoints). */
async function anotherOrganizer(): Promise<WebhookOwner> {
  const org = await t.get(OrganizersService).create(manager.id, { slug: uniqueSlug('more'), name: 'Orbit Workshops' });
  return { kind: 'organizer', organizerId: org.id };
}

/** An endpoint registered through the service (the pages under test are the others); of a new organizer unless told. */
async function endpointOf(owner?: WebhookOwner, url = RECEIVER, eventTypes: DomainEventType[] = ['registration.confirmed']) {
  return (await service().create(manager.id, owner ?? (await anotherOrganizer()), { url, eventTypes, description: 'made by the test' }))
    .endpoint;
}

interface EndpointForm {
  url: string;
  description?: string;
  event_types: string[];
}

function formBody(page: string, values: EndpointForm): URLSearchParams {
  const fields = formFields(page);
  const body = new URLSearchParams({ _csrf: fields._csrf!, url: values.url, description: values.description ?? '' });
  for (const name of ['organizer', 'application']) if (fields[name]) body.set(name, fields[name]);
  for (const type of values.event_types) body.append('event_types', type);
  return body;
}

/** The new-endpoint form of an owner, posted: the answer (303 to the endpoint, or the form again). */
async function addEndpoint(owner: WebhookOwner, values: EndpointForm): Promise<Response> {
  const query = owner.kind === 'organizer' ? `organizer=${owner.organizerId}` : `application=${owner.applicationId}`;
  const form = await browser.get(`/webhooks/new?${query}`);
  expect(form.status).toBe(200);
  return browser.post('/webhooks', formBody(await form.text(), values));
}

const secretOf = (page: string) => /<code id="webhook-secret" class="secret">(whsec_[A-Za-z0-9+/=]+)<\/code\s*>/.exec(page)?.[1];
const fieldError = (page: string, id: string) =>
  new RegExp(`<p class="field-error" id="${id}-error" role="alert">([^<]*)</p>`).exec(page)?.[1];

describe('signed out', () => {
  it('sends every webhook page to sign in, and changes nothing', async () => {
    const endpoint = await endpointOf();
    const anonymous = new Browser(t.url);
    for (const path of ['/webhooks', `/webhooks/new?organizer=${orgId}`, `/webhooks/${endpoint.id}`]) {
      const res = await anonymous.get(path);
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe(`/sign-in?return_to=${encodeURIComponent(path)}`);
    }
    const posted = await anonymous.post(`/webhooks/${endpoint.id}/delete`, {});
    expect(posted.status).toBe(303);
    expect(posted.headers.get('location')).toMatch(/^\/sign-in/);
    expect(await service().find(manager.id, endpoint.id)).not.toBeNull();
  });

  it('shows the guide to anyone: whoever writes a receiver need not have an account', async () => {
    const res = await new Browser(t.url).get('/webhooks/guide');
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('<h2 id="verifying-a-delivery">Verifying a delivery</h2>');
    expect(page).not.toContain('← Webhooks');
  });
});

describe('the list', () => {
  it('explains webhooks to someone with no endpoint, and links to the guide', async () => {
    const newcomer = await createUser(t);
    const theirs = new Browser(t.url);
    await signIn(theirs, newcomer.username, TEST_PASSWORD);
    const page = await (await theirs.get('/webhooks')).text();
    expect(page).toContain('<a href="/webhooks" aria-current="page">Webhooks</a>');
    expect(page).toContain('id="webhooks-empty"');
    expect(page).toContain('create one of those first');
    expect(page).toContain('href="/webhooks/guide"');
  });

  it('groups endpoints by organizer and application, with their state, URL and event types', async () => {
    const orgEndpoint = await endpointOf(organizer, 'https://93.184.215.14/orbit', ['registration.created', 'event.cancelled']);
    const appEndpoint = await endpointOf(application, 'https://93.184.215.14/badges', [...DOMAIN_EVENT_TYPES]);
    await service().update(manager.id, appEndpoint.id, { state: 'paused' });
    const page = await (await browser.get('/webhooks')).text();
    const orgSection = page.slice(page.indexOf(`id="organizer-${orgId}"`), page.indexOf(`id="application-${appId}"`));
    const appSection = page.slice(page.indexOf(`id="application-${appId}"`));
    expect(orgSection).toContain('Orbit Meetups');
    expect(orgSection).toContain(`href="/webhooks/new?organizer=${orgId}"`);
    expect(orgSection).toContain(`<a href="/webhooks/${orgEndpoint.id}"><code class="url">https://93.184.215.14/orbit</code></a>`);
    expect(orgSection).toContain('<span class="tag">registration.created</span><span class="tag">event.cancelled</span>');
    expect(orgSection).not.toContain(appEndpoint.id);
    expect(appSection).toContain('Badge Printer');
    expect(appSection).toContain(`href="/webhooks/new?application=${appId}"`);
    expect(appSection).toContain(appEndpoint.id);
    expect(appSection).toContain('<span class="tag">every event type</span>');
    expect(appSection).toContain('<span class="badge idle">Paused</span>');
    expect(page).not.toContain('id="webhooks-empty"');
  });

  it('shows a disabled endpoint with the reason', async () => {
    const endpoint = await endpointOf(organizer, 'https://93.184.215.14/failing');
    await db().query(`UPDATE webhook_endpoints SET state = 'disabled', disabled_reason = $2, disabled_at = now() WHERE id = $1`, [
      endpoint.id,
      'Every attempt failed for 3 days (last: HTTP 503).',
    ]);
    const page = await (await browser.get('/webhooks')).text();
    expect(page).toContain(
      '<span class="badge bad">Disabled</span> <span class="state-reason">Every attempt failed for 3 days (last: HTTP 503).</span>',
    );
  });

  it('shows the guide (docs/webhooks.md) the pages link to', async () => {
    const res = await browser.get('/webhooks/guide');
    expect(res.status).toBe(200);
    const page = await res.text();
    // Rendered, with the ids its table of contents links to.
    expect(page).toContain('<article class="doc"><h1 id="webhooks">Webhooks</h1>');
    expect(page).toContain('<a href="#verifying-a-delivery">');
    expect(page).toContain('<h2 id="verifying-a-delivery">Verifying a delivery</h2>');
    expect(page).toContain('<table>');
    expect(page).not.toMatch(/<article class="doc">[^]*<script/);
  });

  it("links from an application's page to its webhooks", async () => {
    const page = await (await browser.get(`/applications/${appId}`)).text();
    expect(page).toContain(`href="/webhooks#application-${appId}"`);
    expect(page).toContain(`href="/webhooks/new?application=${appId}"`);
  });
});

describe('adding an endpoint', () => {
  it('shows the secret once, then never again', async () => {
    const res = await addEndpoint(organizer, {
      url: 'https://93.184.215.14/new',
      description: 'CRM sync',
      event_types: ['registration.confirmed', 'registration.cancelled'],
    });
    expect(res.status).toBe(303);
    const location = res.headers.get('location')!;
    const id = /^\/webhooks\/([0-9a-f-]{36})$/.exec(location)![1]!;
    const page = await (await browser.get(location)).text();
    const secret = secretOf(page)!;
    expect(secret).toMatch(/^whsec_/);
    expect(page).toContain('Copy it now: it will not be shown again.');
    expect(page).toContain('Endpoint added.');
    expect(page).toContain('<code class="url" id="endpoint-url-shown">https://93.184.215.14/new</code>');
    const reloaded = await (await browser.get(location)).text();
    expect(secretOf(reloaded)).toBeUndefined();
    expect(reloaded).not.toContain(secret);
    expect(await (await browser.get('/webhooks')).text()).not.toContain(secret);
    const stored = (await service().find(manager.id, id))!;
    expect(stored.eventTypes).toEqual(['registration.confirmed', 'registration.cancelled']);
    expect(stored.description).toBe('CRM sync');
  });

  it('offers every event type with its description and a way to select all', async () => {
    const page = await (await browser.get(`/webhooks/new?organizer=${orgId}`)).text();
    for (const type of DOMAIN_EVENT_TYPES) expect(page).toContain(`<input type="checkbox" name="event_types" value="${type}"`);
    expect(page).toContain('A registration got its seats.');
    expect(page).toContain('data-select-all="event_types"');
  });

  it.each([
    [{ url: '', event_types: ['registration.created'] }, 'endpoint-url', /Give the URL/],
    [{ url: 'ftp://93.184.215.14/x', event_types: ['registration.created'] }, 'endpoint-url', /./],
    [{ url: 'http://93.184.215.14/plain', event_types: ['registration.created'] }, 'endpoint-url', /./],
    [{ url: 'https://127.0.0.1/hook', event_types: ['registration.created'] }, 'endpoint-url', /./],
    [{ url: RECEIVER, event_types: [] }, 'event-types', /Choose at least one event type/],
    [{ url: RECEIVER, event_types: ['registration.exploded'] }, 'event-types', /Unknown event type: registration\.exploded/],
    [{ url: RECEIVER, description: 'x'.repeat(501), event_types: ['registration.created'] }, 'endpoint-description', /500 characters/],
  ])('answers %j with 422 and the message beside the field, keeping what was typed', async (values, id, message) => {
    const res = await addEndpoint(organizer, values);
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(fieldError(page, id)).toMatch(message);
    if (values.url) expect(page).toContain(`value="${values.url}"`);
  });

  it('tells TARGET_NOT_ALLOWED apart from a malformed URL', async () => {
    const refused = await (await addEndpoint(organizer, { url: 'https://[::ffff:127.0.0.1]/hook', event_types: ['event.changed'] })).text();
    expect(fieldError(refused, 'endpoint-url')).toBeDefined();
    const { TARGET_NOT_ALLOWED, INVALID_URL } = await codesOf([
      { url: 'https://10.0.0.1/x', eventTypes: ['event.changed'] },
      { url: 'not a url', eventTypes: ['event.changed'] },
    ]);
    expect(TARGET_NOT_ALLOWED).toBe(1);
    expect(INVALID_URL).toBe(1);
  });

  it('shows every invalid field at once', async () => {
    const res = await addEndpoint(organizer, { url: 'ftp://nope', description: 'y'.repeat(600), event_types: [] });
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(fieldError(page, 'endpoint-url')).toBeDefined();
    expect(fieldError(page, 'event-types')).toBeDefined();
    expect(fieldError(page, 'endpoint-description')).toBeDefined();
  });

  it('refuses a 21st endpoint of one owner above the form', async () => {
    const user = await createUser(t);
    const org = await t.get(OrganizersService).create(user.id, { slug: uniqueSlug('full'), name: 'Full House' });
    const owner: WebhookOwner = { kind: 'organizer', organizerId: org.id };
    for (let i = 0; i < 20; i++) await service().create(user.id, owner, { url: `${RECEIVER}/${i}`, eventTypes: ['event.changed'] });
    const theirs = new Browser(t.url);
    await signIn(theirs, user.username, TEST_PASSWORD);
    const form = await (await theirs.get(`/webhooks/new?organizer=${org.id}`)).text();
    const res = await theirs.post('/webhooks', formBody(form, { url: `${RECEIVER}/21`, event_types: ['event.changed'] }));
    expect(res.status).toBe(422);
    expect(await res.text()).toMatch(/<div class="alert error" role="alert" id="form-error">[^<]*20/);
  });

  it('asks an unverified user to verify their address first, as the applications page does', async () => {
    const user = await createUser(t, { verified: false });
    const { application: app } = await t
      .get(ApplicationsService)
      .create(user.id, { name: 'Unverified App', redirectUris: ['https://u.example.com/cb'], scopes: ['api'] });
    const theirs = new Browser(t.url);
    await signIn(theirs, user.username, TEST_PASSWORD);
    const form = await (await theirs.get(`/webhooks/new?application=${app.id}`)).text();
    expect(form).toContain('Verify your e-mail address to add webhook endpoints.');
    const res = await theirs.post('/webhooks', formBody(form, { url: RECEIVER, event_types: ['event.changed'] }));
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('Verify your e-mail address to add webhook endpoints.');
    expect(await service().list(user.id, { kind: 'application', applicationId: app.id })).toEqual([]);
  });
});

/** How many of these inputs the service refuses with each code. */
async function codesOf(inputs: { url: string; eventTypes: ['event.changed'] }[]): Promise<Record<string, number>> {
  const codes: Record<string, number> = {};
  for (const input of inputs) {
    const err = (await service()
      .create(manager.id, organizer, input)
      .then(
        () => null,
        (e: unknown) => e,
      )) as { code?: string } | null;
    if (err?.code) codes[err.code] = (codes[err.code] ?? 0) + 1;
  }
  return codes;
}

describe('the endpoint page', () => {
  it('edits the URL, description and event types; an invalid change comes back with its errors', async () => {
    const endpoint = await endpointOf(application);
    const page = await (await browser.get(`/webhooks/${endpoint.id}`)).text();
    const { posted, html } = await browser.submit(
      `/webhooks/${endpoint.id}`,
      formBody(page, { url: 'https://93.184.215.14/edited', description: 'Edited', event_types: ['attendee.checked_in'] }),
    );
    expect(posted.status).toBe(303);
    expect(html).toContain('Saved.');
    expect(html).toContain('<code class="url" id="endpoint-url-shown">https://93.184.215.14/edited</code>');
    expect((await service().find(manager.id, endpoint.id))!.eventTypes).toEqual(['attendee.checked_in']);

    const refused = await browser.post(
      `/webhooks/${endpoint.id}`,
      formBody(page, { url: 'https://169.254.169.254/latest', event_types: [] }),
    );
    expect(refused.status).toBe(422);
    const again = await refused.text();
    expect(fieldError(again, 'endpoint-url')).toBeDefined();
    expect(fieldError(again, 'event-types')).toBe('Choose at least one event type.');
    expect(again).toContain('value="https://169.254.169.254/latest"');
    expect((await service().find(manager.id, endpoint.id))!.url).toBe('https://93.184.215.14/edited');
  });

  it('pauses and resumes, and enables a disabled endpoint again', async () => {
    const endpoint = await endpointOf();
    const page = await (await browser.get(`/webhooks/${endpoint.id}`)).text();
    const csrf = formFields(page)._csrf!;
    const paused = await browser.submit(`/webhooks/${endpoint.id}/state`, { _csrf: csrf, state: 'paused' });
    expect(paused.posted.headers.get('location')).toBe(`/webhooks/${endpoint.id}`);
    expect(paused.html).toContain('Endpoint paused');
    expect(paused.html).toContain('<dd id="endpoint-state"><span class="badge idle">Paused</span></dd>');
    expect(paused.html).toContain('>Resume</button>');
    const resumed = await browser.submit(`/webhooks/${endpoint.id}/state`, { _csrf: csrf, state: 'active' });
    expect(resumed.html).toContain('<dd id="endpoint-state"><span class="badge ok">Active</span></dd>');

    await db().query(
      `UPDATE webhook_endpoints SET state = 'disabled', disabled_reason = 'Failing since Monday.', disabled_at = now() WHERE id = $1`,
      [endpoint.id],
    );
    const disabled = await (await browser.get(`/webhooks/${endpoint.id}`)).text();
    expect(disabled).toContain('id="disabled-notice"');
    expect(disabled).toContain('Failing since Monday.');
    expect(disabled).toContain('>Enable again</button>');
    const enabled = await browser.submit(`/webhooks/${endpoint.id}/state`, { _csrf: csrf, state: 'active' });
    expect(enabled.html).toContain('Endpoint enabled again');
    expect((await service().find(manager.id, endpoint.id))!).toMatchObject({ state: 'active', disabledReason: null });
  });

  it('rotates the secret after asking how long the old one keeps signing; the new one is shown once', async () => {
    const endpoint = await endpointOf();
    const confirm = await (await browser.get(`/webhooks/${endpoint.id}/secret`)).text();
    for (const hours of [0, 1, 24, 168]) expect(confirm).toContain(`name="previous_valid_hours" value="${hours}"`);
    const wrong = await browser.post(`/webhooks/${endpoint.id}/secret`, { _csrf: formFields(confirm)._csrf!, previous_valid_hours: '5' });
    expect(wrong.status).toBe(422);
    expect(fieldError(await wrong.text(), 'previous-valid-hours')).toBeDefined();

    const { posted, html } = await browser.submit(`/webhooks/${endpoint.id}/secret`, {
      _csrf: formFields(confirm)._csrf!,
      previous_valid_hours: '24',
    });
    expect(posted.headers.get('location')).toBe(`/webhooks/${endpoint.id}`);
    expect(secretOf(html)).toMatch(/^whsec_/);
    expect(html).toContain('the previous one also signs for 24 hours');
    expect(html).toContain('Rotating: requests carry two signatures');
    const expires = (await service().find(manager.id, endpoint.id))!.previousSecretExpiresAt!;
    expect(Math.abs(expires.getTime() - t.clock.now().getTime() - 24 * 3600_000)).toBeLessThan(60_000);
    expect(secretOf(await (await browser.get(`/webhooks/${endpoint.id}`)).text())).toBeUndefined();

    const second = await browser.submit(`/webhooks/${endpoint.id}/secret`, {
      _csrf: formFields(confirm)._csrf!,
      previous_valid_hours: '0',
    });
    expect(second.html).toContain('only it signs from now on');
    expect(secretOf(second.html)).not.toBe(secretOf(html));
  });

  it('deletes after a confirmation of its own', async () => {
    const endpoint = await endpointOf(organizer, 'https://93.184.215.14/short-lived');
    const confirm = await (await browser.get(`/webhooks/${endpoint.id}/delete`)).text();
    expect(confirm).toContain('Delete this webhook endpoint?');
    expect(await service().find(manager.id, endpoint.id)).not.toBeNull();
    const { posted, html } = await browser.submit(`/webhooks/${endpoint.id}/delete`, formFields(confirm));
    expect(posted.headers.get('location')).toBe('/webhooks');
    expect(html).toContain('Endpoint https://93.184.215.14/short-lived deleted.');
    expect((await browser.get(`/webhooks/${endpoint.id}`)).status).toBe(404);
  });
});

describe('the delivery log', () => {
  it('pages through deliveries newest first, with webhook id, type, state, attempts and times', async () => {
    const endpoint = await endpointOf();
    // Days ago, the newest waiting for a retry ahead (a due one would be taken by the dispatcher's sweeper).
    const start = new Date(Math.floor(t.clock.now().getTime() / 1000) * 1000 - 72 * 3600_000);
    const next = new Date(Math.floor(t.clock.now().getTime() / 1000) * 1000 + 3600_000);
    const made: { id: string; webhookId: string }[] = [];
    for (let i = 0; i < 25; i++) {
      made.push(
        await insertDelivery(db(), endpoint.id, {
          createdAt: new Date(start.getTime() + i * 3600_000),
          eventType: i === 24 ? 'event.changed' : 'registration.confirmed',
          state: i === 24 ? 'scheduled' : 'succeeded',
          attempts: [{ trigger: 'automatic', outcome: i === 24 ? 'failed' : 'succeeded', status: i === 24 ? 503 : 204, durationMs: 40 }],
          nextAttemptAt: i === 24 ? next : null,
        }),
      );
    }
    const first = await (await browser.get(`/webhooks/${endpoint.id}`)).text();
    const rows = [...first.matchAll(/href="\/webhooks\/[0-9a-f-]{36}\/deliveries\/([0-9a-f-]{36})"/g)].map((m) => m[1]);
    expect(rows).toEqual(
      made
        .slice(5)
        .reverse()
        .map((d) => d.id),
    );
    // The newest: retrying after a 503, with its next attempt.
    const newest = first.slice(first.indexOf(made[24]!.id), first.indexOf(made[23]!.id));
    expect(newest).toContain('event.changed');
    expect(newest).toContain(`<code class="webhook-id">${made[24]!.webhookId}</code>`);
    expect(newest).toContain('<span class="badge idle">Retrying</span>');
    expect(newest).toContain('<td data-label="Attempts">1</td>');
    expect(newest).toContain(`<time datetime="${next.toISOString()}">${next.toISOString().slice(0, 19).replace('T', ' ')} UTC</time>`);
    const older = /<a class="button secondary" id="older-deliveries" href="([^"]+)"/.exec(first)![1]!.replace(/&amp;/g, '&');
    const second = await (await browser.get(older)).text();
    const rest = [...second.matchAll(/href="\/webhooks\/[0-9a-f-]{36}\/deliveries\/([0-9a-f-]{36})"/g)].map((m) => m[1]);
    expect(rest).toEqual(
      made
        .slice(0, 5)
        .reverse()
        .map((d) => d.id),
    );
    expect(second).not.toContain('id="older-deliveries"');
    expect(second).toContain('← Newest');
  });

  it('answers a cursor that is not one with a page, not an error', async () => {
    const endpoint = await endpointOf();
    const forged = await browser.get(`/webhooks/${endpoint.id}?after=not-a-cursor`);
    expect(forged.status).toBe(422);
    // A repeated parameter is no cursor at all: the first page.
    expect((await browser.get(`/webhooks/${endpoint.id}?after=a&after=b`)).status).toBe(200);
  });

  it('says so when nothing was delivered yet', async () => {
    const endpoint = await endpointOf();
    expect(await (await browser.get(`/webhooks/${endpoint.id}`)).text()).toContain('id="no-deliveries"');
  });

  it('shows every attempt of a delivery and the request body, indented', async () => {
    const endpoint = await endpointOf();
    const delivery = await insertDelivery(db(), endpoint.id, {
      createdAt: new Date('2026-11-22T10:00:00Z'),
      state: 'succeeded',
      attempts: [
        { trigger: 'automatic', outcome: 'failed', status: 500, body: '<h1>Internal <b>Server</b> Error</h1>', durationMs: 120 },
        { trigger: 'automatic', outcome: 'failed', status: null, error: 'Timed out after 10 s', durationMs: 10_000 },
        { trigger: 'redelivery', outcome: 'succeeded', status: 200, body: 'ok', durationMs: 35 },
      ],
    });
    const page = await (await browser.get(`/webhooks/${endpoint.id}/deliveries/${delivery.id}`)).text();
    expect(page).toContain('<h1>registration.confirmed</h1>');
    expect(page).toContain(delivery.webhookId);
    for (const n of [1, 2, 3]) expect(page).toContain(`id="attempt-${n}"`);
    expect(page).toContain('<pre class="payload response">&lt;h1&gt;Internal &lt;b&gt;Server&lt;/b&gt; Error&lt;/h1&gt;</pre>');
    expect(page).toContain('<dd class="attempt-error">Timed out after 10 s</dd>');
    expect(page).toContain('<dd>10000 ms</dd>');
    expect(page).toContain('<dd>Redelivery</dd>');
    expect(page).toContain('<code>500</code>');
    expect(page).toContain('<time datetime="2026-11-22T10:01:00.000Z">2026-11-22 10:01:00 UTC</time>');
    expect(page).toContain('<pre class="payload" id="request-body-json">{\n  &quot;type&quot;: &quot;registration.confirmed&quot;,');
    expect(page).toContain(`action="/webhooks/${endpoint.id}/deliveries/${delivery.id}/redeliver"`);
  });
});

describe('test events and redelivery', () => {
  it('sends a test event and shows its delivery', async () => {
    const endpoint = await endpointOf();
    const page = await (await browser.get(`/webhooks/${endpoint.id}`)).text();
    const { posted, html } = await browser.submit(`/webhooks/${endpoint.id}/test`, { _csrf: formFields(page)._csrf! });
    expect(posted.status).toBe(303);
    expect(posted.headers.get('location')).toMatch(new RegExp(`^/webhooks/${endpoint.id}/deliveries/[0-9a-f-]{36}$`));
    expect(html).toContain('Test event sent.');
    expect(html).toContain('<h1>webhook.test</h1>');
    expect(html).toContain(`&quot;endpoint_id&quot;: &quot;${endpoint.id}&quot;`);
    const log = await (await browser.get(`/webhooks/${endpoint.id}`)).text();
    expect(log).toContain('webhook.test');
  });

  it('redelivers, and answers 429 with the reason past ten a minute', async () => {
    const endpoint = await endpointOf();
    const delivery = await insertDelivery(db(), endpoint.id, {
      createdAt: new Date('2026-11-23T10:00:00Z'),
      state: 'failed',
      attempts: [{ trigger: 'automatic', outcome: 'failed', status: 502, durationMs: 80 }],
    });
    const path = `/webhooks/${endpoint.id}/deliveries/${delivery.id}`;
    const csrf = formFields(await (await browser.get(path)).text())._csrf!;
    const { posted, html } = await browser.submit(`${path}/redeliver`, { _csrf: csrf });
    expect(posted.status).toBe(303);
    expect(posted.headers.get('location')).toBe(path);
    expect(html).toContain('Redelivery queued.');
    for (let i = 1; i < 10; i++) expect((await browser.post(`${path}/redeliver`, { _csrf: csrf })).status).toBe(303);
    const refused = await browser.post(`${path}/redeliver`, { _csrf: csrf });
    expect(refused.status).toBe(429);
    const body = await refused.text();
    expect(body).toMatch(/<div class="alert error" role="alert" id="action-error">At most 10 redeliveries a minute[^<]*<\/div>/);
    // The page is still the delivery's, with its attempts.
    expect(body).toContain('id="attempt-1"');
  });

  it('answers 429 past ten test events a minute', async () => {
    const endpoint = await endpointOf();
    const csrf = formFields(await (await browser.get(`/webhooks/${endpoint.id}`)).text())._csrf!;
    for (let i = 0; i < 10; i++) expect((await browser.post(`/webhooks/${endpoint.id}/test`, { _csrf: csrf })).status).toBe(303);
    const refused = await browser.post(`/webhooks/${endpoint.id}/test`, { _csrf: csrf });
    expect(refused.status).toBe(429);
    expect(await refused.text()).toMatch(/id="action-error">At most 10 test events a minute/);
  });
});

describe('access', () => {
  it("never shows or changes another user's endpoint or delivery: 404, as for none at all", async () => {
    const endpoint = await endpointOf();
    const delivery = await insertDelivery(db(), endpoint.id, { createdAt: new Date('2026-11-24T10:00:00Z'), attempts: [] });
    const stranger = new Browser(t.url);
    await signIn(stranger, (await createUser(t)).username, TEST_PASSWORD);
    const gets = [
      `/webhooks/${endpoint.id}`,
      `/webhooks/${endpoint.id}/secret`,
      `/webhooks/${endpoint.id}/delete`,
      `/webhooks/${endpoint.id}/deliveries/${delivery.id}`,
      `/webhooks/${randomUUID()}`,
      '/webhooks/not-a-uuid',
      `/webhooks/new?organizer=${orgId}`,
      `/webhooks/new?application=${appId}`,
      `/webhooks/new?organizer=${randomUUID()}`,
      '/webhooks/new',
    ];
    for (const path of gets) {
      const res = await stranger.get(path);
      expect([path, res.status]).toEqual([path, 404]);
      expect(await res.text()).toContain('Page not found');
    }
    const csrf = formFields(await (await stranger.get('/webhooks')).text())._csrf!;
    const posts: [string, Record<string, string>][] = [
      [`/webhooks/${endpoint.id}`, { url: 'https://93.184.215.14/stolen', event_types: 'event.changed' }],
      [`/webhooks/${endpoint.id}/state`, { state: 'paused' }],
      [`/webhooks/${endpoint.id}/secret`, { previous_valid_hours: '0' }],
      [`/webhooks/${endpoint.id}/test`, {}],
      [`/webhooks/${endpoint.id}/delete`, {}],
      [`/webhooks/${endpoint.id}/deliveries/${delivery.id}/redeliver`, {}],
      ['/webhooks', { organizer: orgId, url: 'https://93.184.215.14/planted', event_types: 'event.changed' }],
    ];
    for (const [path, form] of posts) {
      const res = await stranger.post(path, { _csrf: csrf, ...form });
      expect([path, res.status]).toEqual([path, 404]);
    }
    expect(await service().find(manager.id, endpoint.id)).toMatchObject({ url: RECEIVER, state: 'active' });
    expect((await service().list(manager.id, organizer)).some((e) => e.url.endsWith('/planted'))).toBe(false);
  });

  it("shows a delivery only under its own endpoint's address", async () => {
    const mine = await endpointOf();
    const other = await endpointOf(application);
    const delivery = await insertDelivery(db(), other.id, { createdAt: new Date('2026-11-24T11:00:00Z'), attempts: [] });
    expect((await browser.get(`/webhooks/${other.id}/deliveries/${delivery.id}`)).status).toBe(200);
    expect((await browser.get(`/webhooks/${mine.id}/deliveries/${delivery.id}`)).status).toBe(404);
  });

  it('refuses a form without its CSRF token or from another origin, and changes nothing', async () => {
    const endpoint = await endpointOf();
    const csrf = formFields(await (await browser.get(`/webhooks/${endpoint.id}`)).text())._csrf!;
    const missing = await browser.post(`/webhooks/${endpoint.id}/state`, { state: 'paused' });
    expect(missing.status).toBe(403);
    const crossSite = await browser.post(`/webhooks/${endpoint.id}/delete`, { _csrf: csrf }, { origin: 'https://evil.example' });
    expect(crossSite.status).toBe(403);
    const forged = await browser.post('/webhooks', { _csrf: 'forged', organizer: orgId, url: RECEIVER, event_types: 'event.changed' });
    expect(forged.status).toBe(403);
    expect(await service().find(manager.id, endpoint.id)).toMatchObject({ state: 'active' });
  });
});
