import { resolve } from 'node:path';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { RECENT_SIGN_IN_MS } from '../../src/passkeys/passkey-settings.controller.js';
import { UsersService } from '../../src/users/users.service.js';
import { ROOT } from '../support/processes.js';
import { freePort, startTestApp, TestApp } from '../support/test-app.js';
import { launchChromium } from './chromium.js';

// Passkeys in Chromium, with the DevTools protocol's virtual authenticator standing in for the device:
// add one on the security page, sign out, sign in with it alone (no username), and be refused when the
// authenticator does not verify the user.

const SHOTS = resolve(ROOT, 'docs/screenshots');
const WIDTHS = [390, 1280];
const USER = {
  username: 'grace-hopper',
  email: 'grace.hopper@navy.example.com',
  name: 'Grace Brewster Murray Hopper',
  password: 'cobol-compiler-1959',
};

let t: TestApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let cdp: CDPSession;
let authenticatorId: string;
const problems: string[] = [];

beforeAll(async () => {
  // WebAuthn needs a secure context: http://localhost is one (127.0.0.1 would be too, but is no valid RP ID).
  const port = await freePort();
  t = await startTestApp({ BASE_URL: `http://localhost:${port}`, PORT: String(port) }, { port });
  await t.get(UsersService).create(USER, { emailVerified: true });
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content[- ]Security[- ]Policy/i.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  await page.addInitScript(
    "if (sessionStorage.getItem('test:no-passkey-autofill')) PublicKeyCredential.isConditionalMediationAvailable = async () => false;",
  );
  cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  }));
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function noSidewaysScroll(tab: Page): Promise<void> {
  const { scrollWidth, innerWidth } = await tab.evaluate<{ scrollWidth: number; innerWidth: number }>(
    '({ scrollWidth: document.documentElement.scrollWidth, innerWidth })',
  );
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
}

/** Screenshots of the page as it is, at both widths, each checked for sideways scrolling. */
async function shoot(name: string, tab = page): Promise<void> {
  for (const width of WIDTHS) {
    await tab.setViewportSize({ width, height: width < 1024 ? 844 : 800 });
    await noSidewaysScroll(tab);
    await tab.screenshot({ path: `${SHOTS}/${name}-${width}.png`, fullPage: true });
  }
  await tab.setViewportSize({ width: 1280, height: 800 });
}

async function sessionCount(): Promise<number> {
  const [row] = (await t.get(DataSource).query('SELECT count(*)::int AS count FROM sessions')) as { count: number }[];
  return row!.count;
}

async function newestAmr(): Promise<string[]> {
  const [session] = (await t.get(DataSource).query('SELECT amr FROM sessions ORDER BY created_at DESC LIMIT 1')) as { amr: string[] }[];
  return session!.amr;
}

/**
 * Whether the pages of this tab offer passkeys in the login field's autofill: the virtual authenticator
 * answers such a conditional request at once, so it is off wherever only the button may ask (and on
 * the sign-in page a signed-out test lands on). The init script reads the tab's flag.
 */
async function autofill(on: boolean): Promise<void> {
  await page.evaluate(
    on ? "sessionStorage.removeItem('test:no-passkey-autofill')" : "sessionStorage.setItem('test:no-passkey-autofill', '1')",
  );
}

/** Signs out, landing on a sign-in page without autofill. */
async function signOut(): Promise<void> {
  await page.goto(`${t.config.baseUrl}/account/security`);
  await autofill(false);
  if (!(await page.isVisible('button:has-text("Sign out")'))) await page.click('summary:has-text("Menu")');
  await page.click('button:has-text("Sign out")');
  await page.waitForURL(`${t.config.baseUrl}/sign-in`);
}

describe('passkeys in the browser', () => {
  it('adds a passkey on the security page after signing in with the password', async () => {
    await page.goto(`${t.config.baseUrl}/sign-in?return_to=%2Faccount%2Fsecurity`);
    // The button appears once the script has found the browser can do passkeys.
    await page.waitForSelector('button:has-text("Sign in with a passkey"):enabled');
    expect(await page.isHidden('[data-passkey-unsupported]')).toBe(true);
    await shoot('sign-in-passkey');
    await page.fill('#login', USER.username);
    await page.fill('#password', USER.password);
    await page.click('button:has-text("Sign in")');
    await page.waitForURL(`${t.config.baseUrl}/account/security`);
    await page.waitForSelector('#passkeys');
    await shoot('security-passkeys-none');

    await page.click('a:has-text("Add a passkey")');
    await page.waitForSelector('button:has-text("Create passkey"):enabled');
    await shoot('passkey-add');
    await page.fill('#passkey-name', 'Laptop (virtual authenticator)');
    await page.click('button:has-text("Create passkey")');
    // The first second factor of the account: its recovery codes, once.
    await page.waitForURL(`${t.config.baseUrl}/account/two-factor/recovery-codes`);
    await page.waitForSelector('text=Passkey “Laptop (virtual authenticator)” added.');
    expect(await page.locator('#recovery-codes li').count()).toBe(10);
    await page.goto(`${t.config.baseUrl}/account/security#passkeys`);
    await shoot('security-passkeys');

    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    const rows: { credential_id: string; name: string }[] = await t.get(DataSource).query('SELECT credential_id, name FROM passkeys');
    // The protocol gives the id in base64, the browser's JSON (and the table) in base64url.
    const credentialId = Buffer.from(credentials[0]!.credentialId, 'base64').toString('base64url');
    expect(rows).toEqual([{ credential_id: credentialId, name: 'Laptop (virtual authenticator)' }]);
  });

  it('renames the passkey, and shows the removal confirmation', async () => {
    await page.goto(`${t.config.baseUrl}/account/security`);
    await page.click('#passkeys ~ table a:has-text("Rename")');
    await page.waitForSelector('#passkey-name');
    await shoot('passkey-rename');
    await page.fill('#passkey-name', 'Laptop');
    await page.click('button:has-text("Save name")');
    await page.waitForSelector('text=Passkey renamed to “Laptop”.');

    // A while after signing in, removing a passkey asks for the password first (sudo mode).
    t.clock.advance(RECENT_SIGN_IN_MS + 1000);
    await page.click('#passkeys ~ table a:has-text("Remove…")');
    await page.waitForSelector('h1:has-text("Confirm your password")');
    await shoot('passkey-confirm-password');
    await page.fill('#confirm-password', USER.password);
    await page.click('button:has-text("Confirm password")');
    await page.waitForSelector('h1:has-text("Remove “Laptop”?")');
    await shoot('passkey-remove');
    await page.click('a:has-text("Cancel")');
    await page.waitForURL(`${t.config.baseUrl}/account/security#passkeys`);
  });

  it('signs in with the passkey offered in the login field (autofill), without typing a username', async () => {
    await signOut();
    await autofill(true);
    // The virtual authenticator answers the page's conditional request at once, as a person picking the
    // passkey from the login field's autofill would.
    await page.goto(`${t.config.baseUrl}/sign-in?return_to=%2Faccount%2Fsecurity`);
    await page.waitForURL(`${t.config.baseUrl}/account/security`);
    // Chromium's virtual authenticator reports its credentials as not backed up: bound to this device.
    expect(await newestAmr()).toEqual(['hwk', 'mfa']);
  });

  it('signs in with the "Sign in with a passkey" button', async () => {
    await signOut();
    const before = await sessionCount();
    await page.goto(`${t.config.baseUrl}/sign-in?return_to=%2Faccount%2Fsecurity`);
    await page.click('button:has-text("Sign in with a passkey"):enabled');
    await page.waitForURL(`${t.config.baseUrl}/account/security`);
    expect(await sessionCount()).toBe(before + 1);
    expect(await newestAmr()).toEqual(['hwk', 'mfa']);
    await page.waitForSelector('#passkeys ~ table td:has-text("Laptop")');
  });

  // Chromium ends the request itself when the authenticator fails to verify the user, and does not
  // offer a discoverable passkey from an authenticator that cannot (credProtect): the server's own
  // refusal of an answer without user verification, and its message, are tested in test/passkeys.test.ts.
  it('is refused when the authenticator fails to verify the user: the browser ends the request, and no session starts', async () => {
    await signOut();
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
    try {
      await page.goto(`${t.config.baseUrl}/sign-in`);
      const before = await sessionCount();
      await page.click('button:has-text("Sign in with a passkey"):enabled');
      await page.waitForSelector('[data-passkey-error]:visible');
      expect(await page.textContent('[data-passkey-error]')).toContain('could not check that it is you');
      expect(await sessionCount()).toBe(before);
      await shoot('sign-in-passkey-cancelled');
    } finally {
      await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
    }
  });

  it('offers the passkey as the second step after the password', async () => {
    // Still signed out, with the autofill off: the password first.
    await page.goto(`${t.config.baseUrl}/sign-in?return_to=%2Faccount%2Fsecurity`);
    await page.fill('#login', USER.username);
    await page.fill('#password', USER.password);
    await page.click('button:has-text("Sign in"):not(:has-text("passkey"))');
    await page.waitForURL(`${t.config.baseUrl}/sign-in/second-factor`);
    await page.waitForSelector('button:has-text("Use a passkey"):enabled');
    await shoot('second-factor-passkey');
    await page.click('button:has-text("Use a passkey")');
    await page.waitForURL(`${t.config.baseUrl}/account/security`);
    expect(await newestAmr()).toEqual(['pwd', 'hwk', 'mfa']);
  });

  it('ran without script errors or CSP violations', () => {
    expect(problems).toEqual([]);
  });
});
