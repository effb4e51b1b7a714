import { resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { GrantsService } from '../../src/oauth/consent/grants.service.js';
import { ApplicationsService } from '../../src/oauth/clients/applications.service.js';
import { DeviceAuthorizationsService } from '../../src/oauth/device/device-authorizations.service.js';
import { PersonalTokensService } from '../../src/personal-tokens/personal-tokens.service.js';
import { ResourceServersService } from '../../src/oauth/resources/resource-servers.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { ROOT } from '../support/processes.js';
import { UnsubscribeLinks } from '../../src/notifications/unsubscribe-links.js';
import { freePort, startTestApp, TestApp } from '../support/test-app.js';
import { launchChromium } from './chromium.js';
import { expectNoHorizontalOverflow } from './page-fit.js';

// Every page at a phone's width and a laptop's: nothing may scroll sideways, and Sign out stays reachable.

const SHOTS = resolve(ROOT, 'docs/screenshots');
const WIDTHS = [
  { width: 390, height: 844 },
  { width: 1280, height: 800 },
];
/** Below this width the navigation is expected to be collapsed behind its Menu button. */
const COLLAPSED_BELOW = 1024;

// Long names, addresses and identifiers on purpose: they are what overflows a phone.
const USER = {
  username: 'katherine-coleman-goble-johnson',
  email: 'katherine.coleman.goble.johnson@flight-research.langley.example.com',
  name: 'Katherine Coleman Goble Johnson',
  password: 'orbital-mechanics-1962-langley',
};
const LONG_REDIRECT = 'https://mission-planner.flight-research.example.com/oauth/callback/agora?tenant=langley-research-center';
const CALLBACK = 'http://localhost:4000/callback';
const LONG_LOGOUT = 'https://mission-planner.flight-research.example.com/signed-out/agora?tenant=langley-research-center';

let t: TestApp;
let browser: Browser;
/** Cookies of a browser signed in as USER through the sign-in page. */
let signedInState: Awaited<ReturnType<BrowserContext['storageState']>>;
const data = {
  tokenId: '',
  resourceServerId: '',
  applicationId: '',
  clientId: '',
  approvedId: '',
  userCode: '',
  publicApplicationId: '',
  selfRegisteredClientId: '',
  selfRegisteredUserCode: '',
  unsubscribePath: '',
};

interface PageCase {
  /** File name stem of the screenshots, docs/screenshots/<name>-<width>.png */
  name: string;
  signedIn: boolean;
  /** Pages without the signed-in navigation (error pages). */
  noNavigation?: boolean;
  /** Brings the page to the state to check (navigates, fills forms…). */
  open: (page: Page) => Promise<unknown>;
}

const visit = (path: () => string, waitFor?: string) => async (page: Page) => {
  await page.goto(`${t.config.baseUrl}${path()}`);
  if (waitFor) await page.waitForSelector(waitFor);
};

/** Follows a device link with the code, then confirms the code as the page asks (RFC 8628 §3.3.1). */
const enterDeviceCode = (userCode: () => string, waitFor: string) => async (page: Page) => {
  await visit(() => `/oauth/device?user_code=${userCode()}`, '#user_code')(page);
  await page.click('button:has-text("Continue")');
  await page.waitForSelector(waitFor);
};

function authorizeQuery(clientId: string): string {
  return new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: CALLBACK,
    scope: 'openid profile email api read_api',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    state: 'responsive-state',
  }).toString();
}

// One line per page; add new pages here.
const PAGES: PageCase[] = [
  { name: 'sign-in', signedIn: false, open: visit(() => '/sign-in') },
  {
    name: 'sign-in-to-application',
    signedIn: false,
    open: visit(() => `/oauth/authorize?${authorizeQuery(data.clientId)}`, 'text=Sign in to continue to'),
  },
  {
    name: 'sign-in-error',
    signedIn: false,
    open: async (page) => {
      await visit(() => '/sign-in')(page);
      await page.fill('#login', USER.email);
      await page.fill('#password', 'not-the-password');
      await page.click('button[type=submit]');
      await page.waitForSelector('.alert.error');
    },
  },
  { name: 'sign-up', signedIn: false, open: visit(() => '/sign-up') },
  {
    name: 'sign-up-errors',
    signedIn: false,
    open: async (page) => {
      await visit(() => '/sign-up')(page);
      await page.fill('#name', USER.name);
      await page.fill('#username', USER.username);
      await page.fill('#email', 'not-an-address-but-a-very-long-string-without-any-at-sign-in-it');
      await page.fill('#password', 'short');
      await page.click('button[type=submit]');
      await page.waitForSelector('.field-error');
    },
  },
  {
    name: 'authorization-error',
    signedIn: false,
    open: visit(() => `/oauth/authorize?client_id=no-such-client&redirect_uri=${encodeURIComponent(LONG_REDIRECT)}`, '.alert.error'),
  },
  { name: 'home', signedIn: true, open: visit(() => '/') },
  { name: 'unsubscribe', signedIn: false, open: visit(() => data.unsubscribePath, 'text=Stop reminders?') },
  {
    name: 'unsubscribe-done',
    signedIn: false,
    open: async (page) => {
      await visit(() => data.unsubscribePath, 'text=Stop reminders?')(page);
      await page.click('button:has-text("Unsubscribe")');
      await page.waitForSelector('text=gets no more reminders');
    },
  },
  { name: 'unsubscribe-invalid', signedIn: false, open: visit(() => '/mail/unsubscribe?token=abc', 'text=This link is not valid') },
  { name: 'account', signedIn: true, open: visit(() => '/account', 'tbody tr') },
  {
    name: 'account-token-created',
    signedIn: true,
    open: async (page) => {
      await visit(() => '/account')(page);
      await page.fill('#token-name', 'release pipeline for the flight research dashboards');
      await page.check('input[value=api]');
      await page.click('text=Create token');
      await page.waitForSelector('#new-token');
    },
  },
  { name: 'token-revoke', signedIn: true, open: visit(() => `/account/tokens/${data.tokenId}/revoke`, 'text=Revoke token') },
  { name: 'applications', signedIn: true, open: visit(() => '/applications', 'tbody tr') },
  { name: 'application', signedIn: true, open: visit(() => `/applications/${data.applicationId}`, '#client-id') },
  { name: 'application-public', signedIn: true, open: visit(() => `/applications/${data.publicApplicationId}`, '#client-type') },
  {
    name: 'applications-register-public-errors',
    signedIn: true,
    open: async (page) => {
      await visit(() => '/applications')(page);
      await page.check('input[name=client_type][value=public]');
      await page.fill('#app-name', 'Field notebook for the flight research division, desktop edition');
      await page.fill('#redirect-uris', 'ftp://flight-research.langley.example.com/a-very-long-path/that/does/not/stop');
      await page.fill('#post-logout-redirect-uris', 'https://mission-planner.flight-research.example.com/signed-out#fragment-not-allowed');
      await page.click('text=Register application');
      await page.waitForSelector('#post-logout-redirect-uris-error');
    },
  },
  {
    name: 'application-delete',
    signedIn: true,
    open: visit(() => `/applications/${data.applicationId}/delete`, 'text=Delete application'),
  },
  { name: 'resource-servers', signedIn: true, open: visit(() => '/resource-servers', 'tbody tr') },
  { name: 'resource-server', signedIn: true, open: visit(() => `/resource-servers/${data.resourceServerId}`, 'text=Introspection secret') },
  { name: 'authorized', signedIn: true, open: visit(() => '/account/authorized', 'tbody tr') },
  {
    name: 'consent',
    signedIn: true,
    open: visit(() => `/oauth/authorize?${authorizeQuery(data.clientId)}`, 'text=wants to use your Agora account'),
  },
  { name: 'device', signedIn: true, open: visit(() => '/oauth/device', '#user_code') },
  { name: 'device-link', signedIn: true, open: visit(() => `/oauth/device?user_code=${data.userCode}`, 'text=A link filled in this code') },
  { name: 'device-wrong-code', signedIn: true, open: enterDeviceCode(() => 'BBBB-BBBB', '.alert.error') },
  {
    name: 'device-consent',
    signedIn: true,
    open: enterDeviceCode(() => data.userCode, 'text=Approve only if you started this'),
  },
  { name: 'explorer', signedIn: true, open: visit(() => '/explorer', '.graphiql-container') },
  { name: 'security', signedIn: true, open: visit(() => '/account/security', 'text=Where you are signed in') },
  {
    name: 'security-errors',
    signedIn: true,
    open: async (page) => {
      await visit(() => '/account/security')(page);
      await page.fill('#current-password', 'not-the-password');
      await page.fill('#new-password', 'short');
      await page.click('button:has-text("Change password")');
      await page.waitForSelector('#new-password-error');
    },
  },
  { name: 'sign-out-everywhere', signedIn: true, open: visit(() => '/account/sessions/sign-out-everywhere', 'text=Sign out everywhere?') },
  {
    name: 'regenerate-secret',
    signedIn: true,
    open: visit(() => `/applications/${data.applicationId}/secret`, 'text=Regenerate the secret'),
  },
  { name: 'revoke-access', signedIn: true, open: visit(() => `/account/authorized/${data.approvedId}/revoke`, 'text=Revoke access for') },
  { name: 'not-found', signedIn: true, noNavigation: true, open: visit(() => '/no-such-page', 'text=Page not found') },
  {
    name: 'logout-confirm',
    signedIn: true,
    open: visit(
      () =>
        `/oauth/logout?${new URLSearchParams({ client_id: data.clientId, post_logout_redirect_uri: LONG_LOGOUT, state: 'responsive' }).toString()}`,
      'text=Sign out of Agora?',
    ),
  },
  { name: 'signed-out', signedIn: false, open: visit(() => '/oauth/logout', 'text=You are signed out') },
  {
    name: 'consent-self-registered',
    signedIn: true,
    open: visit(() => `/oauth/authorize?${authorizeQuery(data.selfRegisteredClientId)}`, 'text=Not verified by Agora'),
  },
  {
    name: 'authorization-error-self-registered',
    signedIn: false,
    open: visit(
      () =>
        `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: data.selfRegisteredClientId, redirect_uri: LONG_REDIRECT, state: 'responsive' }).toString()}`,
      'text=Not verified by Agora',
    ),
  },
  {
    name: 'authorization-unmet-self-registered',
    signedIn: true,
    noNavigation: true,
    open: visit(
      () => `/oauth/authorize?${authorizeQuery(data.selfRegisteredClientId)}&acr_values=aal2`,
      'text=This application requires a second factor',
    ),
  },
  { name: 'email-verified-changed', signedIn: false, open: visit(() => '/email-verified?changed=1') },
  {
    name: 'device-consent-self-registered',
    signedIn: true,
    open: enterDeviceCode(() => data.selfRegisteredUserCode, 'text=Not verified by Agora'),
  },
  {
    name: 'logout-confirm-self-registered',
    signedIn: true,
    open: visit(
      () =>
        `/oauth/logout?${new URLSearchParams({ client_id: data.selfRegisteredClientId, post_logout_redirect_uri: LONG_LOGOUT, state: 'responsive' }).toString()}`,
      'text=Not verified by Agora',
    ),
  },
  {
    name: 'signed-out-self-registered',
    signedIn: false,
    open: visit(
      () =>
        `/oauth/logout?${new URLSearchParams({ client_id: data.selfRegisteredClientId, post_logout_redirect_uri: LONG_LOGOUT, state: 'responsive' }).toString()}`,
      'text=Not verified by Agora',
    ),
  },
  {
    name: 'logout-error',
    signedIn: false,
    open: visit(() => `/oauth/logout?post_logout_redirect_uri=${encodeURIComponent(LONG_LOGOUT)}`, '.alert.error'),
  },
];

/** Sign out is visible at once on wide screens, behind the Menu button on narrow ones, and inside the viewport. */
async function expectSignOutReachable(page: Page, width: number): Promise<void> {
  const signOut = page.getByRole('button', { name: 'Sign out', exact: true });
  if (width < COLLAPSED_BELOW) {
    expect(await signOut.isVisible()).toBe(false);
    await page.locator('header summary').click();
  }
  expect(await signOut.isVisible()).toBe(true);
  const box = (await signOut.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(width);
  expect(box.y).toBeGreaterThanOrEqual(0);
}

beforeAll(async () => {
  const port = await freePort();
  t = await startTestApp({ BASE_URL: `http://localhost:${port}`, PORT: String(port) }, { port });
  browser = await launchChromium();

  const user = await t.get(UsersService).create(USER, { emailVerified: true });
  const { personalToken } = await t
    .get(PersonalTokensService)
    .create(user.id, { name: 'nightly export of the flight research schedule', scopes: ['api', 'read_api'] });
  data.tokenId = personalToken.id;
  const { resourceServer } = await t.get(ResourceServersService).create(user.id, {
    name: 'Flight research schedule service for the hangar crews and the mission planners',
    identifier: 'https://schedule.flight-research.langley.example.com/api/v2/a-long-path-to-the-resource',
    accessTokenFormat: 'jwt',
  });
  data.resourceServerId = resourceServer.id;
  data.unsubscribePath = new URL(t.get(UnsubscribeLinks).url(user.id)).pathname + new URL(t.get(UnsubscribeLinks).url(user.id)).search;
  const applications = t.get(ApplicationsService);
  const { application } = await applications.create(user.id, {
    name: 'Mission Planner for the Flight Research Division',
    redirectUris: [LONG_REDIRECT, CALLBACK],
    scopes: ['openid', 'profile', 'email', 'api', 'read_api'],
    postLogoutRedirectUris: [LONG_LOGOUT],
    description:
      'Plans test flights for the flight research division: reads the events you registered for and checks you in on the day, so the hangar crew knows who is on board.',
    clientUri: 'https://mission-planner.flight-research.langley.example.com/about/the-planner-and-its-privacy-policy',
    // Not reachable from the test: the page must keep its layout with a logo that does not load.
    logoUri: 'https://assets.flight-research.example.com/mission-planner/logo-256.png',
  });
  data.applicationId = application.id;
  data.clientId = application.clientId;
  const planner = (await applications.findByClientId(application.clientId))!;
  // For the Mission Planner and the schedule service: the device consent screen lists where the access will be used.
  const device = await t
    .get(DeviceAuthorizationsService)
    .start(planner, { scope: 'openid profile email api read_api' }, [t.config.baseUrl, resourceServer.identifier]);
  data.userCode = device.user_code;
  const { application: approved } = await applications.create(user.id, {
    name: 'Orbit Tracker Community Edition',
    redirectUris: [CALLBACK],
    scopes: ['openid', 'profile', 'api'],
  });
  // Approved for a resource server too: the authorized applications page says "Also for" it.
  await t.get(GrantsService).remember(user.id, approved.id, ['openid', 'profile', 'api'], [resourceServer]);
  const { application: publicApp } = await applications.create(
    user.id,
    {
      name: 'Flight Research Field Notebook (desktop and command line)',
      redirectUris: ['http://127.0.0.1/callback', 'edu.langley.flight-research.notebook:/oauth/callback', LONG_REDIRECT],
      scopes: ['openid', 'profile', 'api'],
      postLogoutRedirectUris: ['edu.langley.flight-research.notebook:/signed-out'],
    },
    'public',
  );
  data.publicApplicationId = publicApp.id;
  // As dynamic registration creates it: owned by nobody.
  const { application: selfRegistered } = await applications.create(null, {
    name: 'Official Agora Account Security Assistant for the Flight Research Division',
    redirectUris: [CALLBACK, LONG_REDIRECT],
    scopes: ['openid', 'profile', 'email', 'api', 'read_api'],
    postLogoutRedirectUris: [LONG_LOGOUT],
  });
  data.selfRegisteredClientId = selfRegistered.clientId;
  const selfRegisteredDevice = await t
    .get(DeviceAuthorizationsService)
    .start((await applications.findByClientId(selfRegistered.clientId))!, { scope: 'openid profile' });
  data.selfRegisteredUserCode = selfRegisteredDevice.user_code;
  data.approvedId = approved.id;

  // Signs in through the page, once; every signed-in case reuses these cookies.
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
});

describe.each(PAGES)('the $name page', (pageCase) => {
  it.each(WIDTHS)('fits $width px without scrolling sideways', async (viewport) => {
    const context = await browser.newContext({ viewport, storageState: pageCase.signedIn ? signedInState : undefined });
    try {
      const page = await context.newPage();
      await pageCase.open(page);
      await page.screenshot({ path: `${SHOTS}/${pageCase.name}-${viewport.width}.png`, fullPage: true });
      await expectNoHorizontalOverflow(page);
      if (pageCase.signedIn && !pageCase.noNavigation) {
        await expectSignOutReachable(page, viewport.width);
        await expectNoHorizontalOverflow(page); // the opened menu fits too
        if (pageCase.name === 'home' && viewport.width < COLLAPSED_BELOW) {
          await page.screenshot({ path: `${SHOTS}/menu-open-${viewport.width}.png` });
        }
      }
    } finally {
      await context.close();
    }
  });
});
