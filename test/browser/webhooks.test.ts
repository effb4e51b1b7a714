import { resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { DOMAIN_EVENT_TYPES } from '../../src/events/domain-events.js';
import { OrganizersService } from '../../src/events/organizers.service.js';
import { ApplicationsService } from '../../src/oauth/clients/applications.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { WebhookEndpointsService, type WebhookOwner } from '../../src/webhooks/webhook-endpoints.service.js';
import { ROOT } from '../support/processes.js';
import { freePort, startTestApp, TestApp } from '../support/test-app.js';
import { insertDelivery } from '../support/webhook-log.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { launchChromium } from './chromium.js';
import { expectNoHorizontalOverflow } from './page-fit.js';

// The webhook pages at a phone's width and a laptop's: the list, the form with its errors, an endpoint with
// its delivery log, a delivery with its attempts, redelivery. Nothing may scroll sideways; long URLs,
// webhook ids and response bodies wrap or scroll inside their own box.

const SHOTS = resolve(ROOT, 'docs/screenshots');
const WIDTHS = [
  { width: 390, height: 844 },
  { width: 1280, height: 800 },
];

const USER = {
  username: 'mary-winston-jackson',
  email: 'mary.winston.jackson@flight-research.langley.example.com',
  name: 'Mary Winston Jackson',
  password: 'supersonic-wind-tunnel-1958',
};
const LONG_URL = 'https://crm-sync.flight-research.langley.example.com/integrations/agora/webhooks/registrations?tenant=langley-research';
const LONG_RESPONSE = `<!doctype html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1><p>The upstream server at crm-sync-backend-7f9c4d.internal.flight-research.langley.example.com:8443/integrations/agora/webhooks did not answer in time.</p><p>Request id: ${'a1b2c3d4e5f6'.repeat(8)}</p></body></html>`;

let t: TestApp;
let browser: Browser;
let receiver: WebhookReceiver;
let signedInState: Awaited<ReturnType<BrowserContext['storageState']>>;
const data = {
  organizerId: '',
  logEndpointId: '',
  disabledEndpointId: '',
  deliveryId: '',
  /** Per width: an endpoint at the receiver and a failed delivery of it to redeliver (the throttle counts per endpoint). */
  redeliver: {} as Record<number, { endpointId: string; deliveryId: string }>,
};

const db = () => t.get(DataSource);

beforeAll(async () => {
  const port = await freePort();
  receiver = await WebhookReceiver.start();
  // Private targets and http allowed: the receiver in this process, and names that need no DNS.
  t = await startTestApp(
    { BASE_URL: `http://localhost:${port}`, PORT: String(port), WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOKS_ALLOW_HTTP: 'true' },
    { port },
  );
  browser = await launchChromium();

  const user = await t.get(UsersService).create(USER, { emailVerified: true });
  const organizer = await t
    .get(OrganizersService)
    .create(user.id, { slug: 'langley-flight-research', name: 'Langley Flight Research Division Community Meetups' });
  data.organizerId = organizer.id;
  const { application } = await t.get(ApplicationsService).create(user.id, {
    name: 'Mission Planner for the Flight Research Division',
    redirectUris: ['https://mission-planner.example.com/cb'],
    scopes: ['openid', 'api'],
  });
  const orgOwner: WebhookOwner = { kind: 'organizer', organizerId: organizer.id };
  const appOwner: WebhookOwner = { kind: 'application', applicationId: application.id };
  const endpoints = t.get(WebhookEndpointsService);
  const make = async (owner: WebhookOwner, url: string, eventTypes: string[], description = '') =>
    (await endpoints.create(user.id, owner, { url, eventTypes: eventTypes as never, description })).endpoint;

  const log = await make(orgOwner, LONG_URL, [...DOMAIN_EVENT_TYPES], 'CRM sync of registrations for the flight research meetups');
  data.logEndpointId = log.id;
  const paused = await make(orgOwner, 'https://badges.example.com/agora', ['attendee.checked_in', 'attendee.check_in_undone']);
  await endpoints.update(user.id, paused.id, { state: 'paused' });
  const disabled = await make(appOwner, 'https://slack-bridge.flight-research.example.com/hooks/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX', [
    'registration.created',
    'registration.cancelled',
    'event.changed',
  ]);
  await db().query(`UPDATE webhook_endpoints SET state = 'disabled', disabled_reason = $2, disabled_at = $3 WHERE id = $1`, [
    disabled.id,
    'Every attempt failed for more than 72 hours; the last answered HTTP 410 Gone.',
    new Date('2026-11-23T06:00:00Z'),
  ]);
  data.disabledEndpointId = disabled.id;

  // The log: 24 deliveries an hour apart (a second page), the newest retrying after a 502, its next
  // attempt ahead (the dispatcher's sweeper would take a due one and try it for real).
  const hour = 3600_000;
  const start = new Date(Math.floor(t.clock.now().getTime() / hour) * hour - 30 * hour);
  for (let i = 0; i < 23; i++) {
    await insertDelivery(db(), log.id, {
      createdAt: new Date(start.getTime() + i * 3600_000),
      eventType: DOMAIN_EVENT_TYPES[i % DOMAIN_EVENT_TYPES.length],
      state: i % 7 === 3 ? 'failed' : 'succeeded',
      attempts: [{ trigger: 'automatic', outcome: i % 7 === 3 ? 'failed' : 'succeeded', status: i % 7 === 3 ? 500 : 204, durationMs: 41 }],
    });
  }
  const retrying = await insertDelivery(db(), log.id, {
    createdAt: new Date(start.getTime() + 23 * 3600_000),
    eventType: 'registration.waitlisted',
    state: 'scheduled',
    nextAttemptAt: new Date(t.clock.now().getTime() + 36 * 60_000),
    body: JSON.stringify({
      type: 'registration.waitlisted',
      timestamp: new Date(start.getTime() + 23 * 3600_000).toISOString(),
      data: {
        object: 'registration',
        id: 'UmVnaXN0cmF0aW9uOjdkYjNmNmI0LTk2ZWItNDNmZC1hMzQ0LTg0YTM5ZGM4NDBiMQ',
        organizer_id: 'T3JnYW5pemVyOjNlNTU1ZDM4LWI0ZWUtNGM2NS1hM2Q1LWI1ZjYxYzU3NjA3Mw',
        event_id: 'RXZlbnQ6ZjkyYTYzYzQtNWE3Zi00YzE5LWI0ZTgtNjU3NjUzZDc2OGJm',
        registration_id: 'UmVnaXN0cmF0aW9uOjdkYjNmNmI0LTk2ZWItNDNmZC1hMzQ0LTg0YTM5ZGM4NDBiMQ',
        url: 'http://localhost/api/registrations/7db3f6b4-96eb-43fd-a344-84a39dc840b1',
      },
    }),
    attempts: [
      { trigger: 'automatic', outcome: 'failed', status: 502, body: LONG_RESPONSE, durationMs: 9_874 },
      {
        trigger: 'automatic',
        outcome: 'failed',
        status: null,
        error: 'connect ECONNREFUSED 203.0.113.47:443 (crm-sync.flight-research.langley.example.com) after 10 s',
        durationMs: 10_000,
      },
      { trigger: 'automatic', outcome: 'failed', status: 503, body: 'Service Unavailable', durationMs: 212 },
    ],
  });
  data.deliveryId = retrying.id;

  // Per width, an endpoint at the receiver with a failed delivery to redeliver.
  for (const { width } of WIDTHS) {
    const live = await make(orgOwner, receiver.url(`/agora-${width}`), ['registration.confirmed'], `Local receiver (${width} px)`);
    const failed = await insertDelivery(db(), live.id, {
      createdAt: new Date(start.getTime() + 24 * 3600_000),
      state: 'failed',
      attempts: [{ trigger: 'automatic', outcome: 'failed', status: 500, body: 'Internal Server Error', durationMs: 38 }],
    });
    data.redeliver[width] = { endpointId: live.id, deliveryId: failed.id };
  }

  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${t.config.baseUrl}/sign-in`);
  await page.fill('#login', USER.username);
  await page.fill('#password', USER.password);
  await page.click('button[type=submit]');
  await page.waitForURL(`${t.config.baseUrl}/`);
  signedInState = await context.storageState();
  await context.close();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await receiver?.close();
});

const visit = (page: Page, path: string, waitFor: string) =>
  page.goto(`${t.config.baseUrl}${path}`).then(() => page.waitForSelector(waitFor));

/** A signed-in page at this width, its screenshot saved as docs/screenshots/webhooks-<name>-<width>.png once checked. */
async function atWidth(
  viewport: { width: number; height: number },
  name: string,
  open: (page: Page) => Promise<unknown>,
  /** Console errors this page is expected to log (Chromium reports a page answered 422 or 429). */
  expectedConsole?: RegExp,
) {
  const context = await browser.newContext({ viewport, storageState: signedInState });
  try {
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !expectedConsole?.test(message.text())) problems.push(message.text());
    });
    await open(page);
    await page.screenshot({ path: `${SHOTS}/webhooks-${name}-${viewport.width}.png`, fullPage: true });
    await expectNoHorizontalOverflow(page);
    expect(problems).toEqual([]);
    return page;
  } finally {
    await context.close();
  }
}

describe.each(WIDTHS)('at $width px', (viewport) => {
  it('lists the endpoints by owner with their state, and reaches Webhooks from the navigation', async () => {
    await atWidth(viewport, 'list', async (page) => {
      await visit(page, '/account', 'h1');
      if (viewport.width < 1024) await page.locator('header summary').click();
      await page.click('nav.main >> text=Webhooks');
      await page.waitForSelector('h1:has-text("Webhooks")');
      expect(await page.locator('section.owner').count()).toBe(2);
      expect(await page.textContent(`#organizer-${data.organizerId}`)).toContain('Paused');
      expect(await page.locator('.state-reason').textContent()).toContain('72 hours');
    });
  });

  it('shows the new endpoint form with every error beside its field; select all checks every type', async () => {
    await atWidth(
      viewport,
      'new-errors',
      async (page) => {
        await visit(page, `/webhooks/new?organizer=${data.organizerId}`, '#endpoint-url');
        // Select all, shown by app.js, checks and unchecks every type.
        await page.check('input[data-select-all]');
        expect(await page.locator('input[name=event_types]:checked').count()).toBe(DOMAIN_EVENT_TYPES.length);
        await page.uncheck('input[data-select-all]');
        expect(await page.locator('input[name=event_types]:checked').count()).toBe(0);
        await page.fill('#endpoint-url', 'ftp://crm-sync.flight-research.langley.example.com/integrations/agora/webhooks/registrations');
        // The browser holds a description to its maxlength (500), so the service's own limit is the API tier's to test.
        await page.fill('#endpoint-description', 'x'.repeat(501));
        expect((await page.inputValue('#endpoint-description')).length).toBe(500);
        await page.click('button:has-text("Add endpoint")');
        await page.waitForSelector('#endpoint-url-error');
        expect(await page.isVisible('#event-types-error')).toBe(true);
        expect(await page.inputValue('#endpoint-url')).toMatch(/^ftp:/);
      },
      /status of 422/,
    );
  });

  it('adds an endpoint and shows its secret once', async () => {
    await atWidth(viewport, 'created', async (page) => {
      await visit(page, `/webhooks/new?organizer=${data.organizerId}`, '#endpoint-url');
      await page.fill('#endpoint-url', `${LONG_URL}&width=${viewport.width}`);
      await page.fill('#endpoint-description', 'Badge printer at the front desk');
      await page.check('input[value="attendee.checked_in"]');
      await page.click('button:has-text("Add endpoint")');
      await page.waitForSelector('#webhook-secret');
      expect(await page.textContent('#webhook-secret')).toMatch(/^whsec_/);
      expect(await page.isVisible('button[data-copy=webhook-secret]')).toBe(true);
    });
  });

  it('shows an endpoint with its delivery log and a second page', async () => {
    await atWidth(viewport, 'endpoint', async (page) => {
      await visit(page, `/webhooks/${data.logEndpointId}`, 'table.deliveries');
      expect(await page.locator('table.deliveries tbody tr').count()).toBe(20);
      expect(await page.locator('table.deliveries tbody tr').first().textContent()).toContain('Retrying');
    });
    await atWidth(viewport, 'endpoint-older', async (page) => {
      await visit(page, `/webhooks/${data.logEndpointId}`, 'table.deliveries');
      await page.click('#older-deliveries');
      await page.waitForSelector('text=← Newest');
      expect(await page.locator('table.deliveries tbody tr').count()).toBe(4);
    });
  });

  it('shows a disabled endpoint with the reason and the way to enable it again', async () => {
    await atWidth(viewport, 'endpoint-disabled', (page) => visit(page, `/webhooks/${data.disabledEndpointId}`, '#disabled-notice'));
  });

  it('shows a delivery with every attempt and the request body', async () => {
    await atWidth(viewport, 'delivery', async (page) => {
      await visit(page, `/webhooks/${data.logEndpointId}/deliveries/${data.deliveryId}`, '#attempt-3');
      expect(await page.textContent('#request-body-json')).toContain('"registration_id": "UmVnaXN0cmF0aW9u');
    });
  });

  it("shows the integrators' guide rendered, its contents linking to its sections", async () => {
    await atWidth(viewport, 'guide', async (page) => {
      await visit(page, '/webhooks/guide', 'h2#verifying-a-delivery');
      await page.click('a[href="#verifying-a-delivery"]');
      expect(new URL(page.url()).hash).toBe('#verifying-a-delivery');
    });
  });

  it('asks how long the old secret keeps signing before rotating', async () => {
    await atWidth(viewport, 'rotate', (page) => visit(page, `/webhooks/${data.logEndpointId}/secret`, 'text=Rotate the signing secret?'));
  });

  it('redelivers a failed delivery: the receiver gets it, the attempt shows on reload; past ten a minute, 429', async () => {
    const { endpointId, deliveryId } = data.redeliver[viewport.width]!;
    const path = `/webhooks/${endpointId}/deliveries/${deliveryId}`;
    await atWidth(viewport, 'redelivered', async (page) => {
      await visit(page, path, '#attempt-1');
      await page.click('button:has-text("Redeliver")');
      await page.waitForSelector('text=Redelivery queued.');
      for (let i = 0; i < 50 && !(await page.isVisible('#attempt-2')); i++) {
        await new Promise((done) => setTimeout(done, 200));
        await page.reload();
      }
      expect(await page.textContent('#attempt-2')).toContain('Redelivery');
      expect(await page.textContent('#delivery-state')).toContain('Succeeded');
    });
    expect(receiver.received.filter((r) => r.path === `/agora-${viewport.width}`)).toHaveLength(1);

    await atWidth(
      viewport,
      'redeliver-throttled',
      async (page) => {
        await visit(page, path, '#attempt-2');
        for (let i = 1; i < 10; i++) {
          await page.click('button:has-text("Redeliver")');
          await page.waitForSelector('text=Redelivery queued.');
        }
        const [response] = await Promise.all([
          page.waitForResponse((r) => r.request().method() === 'POST'),
          page.click('button:has-text("Redeliver")'),
        ]);
        expect(response.status()).toBe(429);
        await page.waitForSelector('#action-error');
        expect(await page.textContent('#action-error')).toContain('At most 10 redeliveries a minute');
      },
      /status of 429/,
    );
  });
});
