import { resolve } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { SessionsService } from '../../src/sessions/sessions.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { ROOT } from '../support/processes.js';
import { freePort, startTestApp, TestApp } from '../support/test-app.js';
import { launchChromium } from './chromium.js';

// Two-factor authentication in Chromium: set up through the security page (the key read off the page),
// sign in with a code, with a recovery code, refused with a reused code; every new page at 390 and 1280 px.

const SHOTS = resolve(ROOT, 'docs/screenshots');
const WIDTHS = [
  { width: 390, height: 844 },
  { width: 1280, height: 800 },
];
const USER = { username: 'mary-jackson', email: 'mary.jackson@langley.example.com', name: 'Mary Jackson', password: 'wind-tunnel-1958' };

let t: TestApp;
let browser: Browser;
let secret = '';
let recoveryCodes: string[] = [];
let usedCode = '';

beforeAll(async () => {
  const port = await freePort();
  t = await startTestApp({ BASE_URL: `http://localhost:${port}`, PORT: String(port) }, { port });
  browser = await launchChromium();
  await t.get(UsersService).create(USER, { emailVerified: true });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** Moves the app's clock to one second into the next 30-second step: a code computed now stays the code for the test's steps. */
const nextStep = () => t.clock.advance(30_000 - (t.clock.now().getTime() % 30_000) + 1000);

const codeNow = () => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: t.clock.now().getTime() });

/** At each width: nothing scrolls sideways; a full-page screenshot docs/screenshots/<name>-<width>.png. */
async function shoot(page: Page, name: string): Promise<void> {
  for (const viewport of WIDTHS) {
    await page.setViewportSize(viewport);
    const { scrollWidth, innerWidth } = await page.evaluate<{ scrollWidth: number; innerWidth: number }>(
      '({ scrollWidth: document.documentElement.scrollWidth, innerWidth })',
    );
    expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
    await page.screenshot({ path: `${SHOTS}/${name}-${viewport.width}.png`, fullPage: true });
  }
}

async function newPage(): Promise<Page> {
  return (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
}

/** The password step on the sign-in page; lands on the second step. */
async function password(page: Page): Promise<void> {
  await page.goto(`${t.config.baseUrl}/sign-in`);
  await page.fill('#login', USER.username);
  await page.fill('#password', USER.password);
  await page.click('button[type=submit]');
  await page.waitForURL(`${t.config.baseUrl}/sign-in/second-factor`);
}

async function amrOf(page: Page): Promise<string[] | undefined> {
  const cookie = (await page.context().cookies()).find((c) => c.name === 'agora_session');
  return (await t.get(SessionsService).resolve(cookie?.value))?.amr;
}

describe('two-factor authentication in the browser', () => {
  it('is set up on the security page with a code from the app, and shows the recovery codes once', async () => {
    const page = await newPage();
    await page.goto(`${t.config.baseUrl}/sign-in`);
    await page.fill('#login', USER.username);
    await page.fill('#password', USER.password);
    await page.click('button[type=submit]');
    await page.waitForURL(`${t.config.baseUrl}/`);

    await page.goto(`${t.config.baseUrl}/account/security#two-factor`);
    await page.waitForSelector('h2#two-factor');
    await shoot(page, 'security-two-factor-off');

    await page.click('button:has-text("Set up authenticator app")');
    await page.waitForURL(`${t.config.baseUrl}/account/two-factor/totp`);
    // The QR code (a data: image the CSP allows) is drawn.
    expect(
      await page.evaluate<number>(`document.querySelector('img.qr').complete && document.querySelector('img.qr').naturalWidth`),
    ).toBeGreaterThan(0);
    secret = (await page.textContent('#totp-secret'))!.replace(/\s/g, '');
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await shoot(page, 'two-factor-setup');

    nextStep();
    await page.fill('#code', '000000' === codeNow() ? '111111' : '000000');
    await page.fill('#current-password', USER.password);
    await page.click('button:has-text("Turn on")');
    await page.waitForSelector('#code-error');
    expect(await page.textContent('#code-error')).toContain('That code is not right');
    await shoot(page, 'two-factor-setup-error');

    await page.fill('#code', codeNow());
    await page.fill('#current-password', USER.password);
    await page.click('button:has-text("Turn on")');
    await page.waitForURL(`${t.config.baseUrl}/account/two-factor/recovery-codes`);
    recoveryCodes = (await page.locator('#recovery-codes code').allTextContents()).map((code) => code.trim());
    expect(recoveryCodes).toHaveLength(10);
    expect(await page.isVisible('button[data-copy="recovery-codes"]')).toBe(true);
    await shoot(page, 'two-factor-recovery-codes-new');

    await page.reload();
    expect(await page.$$('#recovery-codes code')).toHaveLength(0);
    await page.waitForSelector('text=You have 10 of 10 recovery codes left.');
    await shoot(page, 'two-factor-recovery-codes');

    await page.goto(`${t.config.baseUrl}/account/security#two-factor`);
    await page.waitForSelector('text=Turn off…');
    await shoot(page, 'security-two-factor-on');
    await page.click('text=Turn off…');
    await page.waitForSelector('text=Turn off the authenticator app?');
    await shoot(page, 'two-factor-disable');
    await page.context().close();
    nextStep(); // the code that turned it on is used up
  });

  it('signs in with a code from the app after the password', async () => {
    const page = await newPage();
    await password(page);
    expect((await page.context().cookies()).map((c) => c.name)).not.toContain('agora_session');
    expect(await page.getAttribute('#code', 'autocomplete')).toBe('one-time-code');
    expect(await page.getAttribute('#code', 'inputmode')).toBe('numeric');
    await shoot(page, 'sign-in-second-factor');
    usedCode = codeNow();
    await page.fill('#code', usedCode);
    await page.click('button:has-text("Verify")');
    await page.waitForURL(`${t.config.baseUrl}/`);
    expect(await amrOf(page)).toEqual(['pwd', 'otp', 'mfa']);
    await page.context().close();
  });

  it('refuses the same code again', async () => {
    const page = await newPage();
    await password(page);
    await page.fill('#code', usedCode);
    await page.click('button:has-text("Verify")');
    await page.waitForSelector('#code-error');
    expect(await page.textContent('#code-error')).toBe('This code was already used. Wait for the next one.');
    expect(page.url()).toBe(`${t.config.baseUrl}/sign-in/second-factor`);
    expect(await amrOf(page)).toBeUndefined();
    await shoot(page, 'sign-in-second-factor-error');
    await page.context().close();
  });

  it('signs in with a recovery code, once', async () => {
    const page = await newPage();
    await password(page);
    await page.click('text=Use a recovery code');
    await page.waitForSelector('#recovery-code');
    await shoot(page, 'sign-in-recovery-code');
    await page.fill('#recovery-code', recoveryCodes[0]!);
    await page.click('button:has-text("Verify")');
    await page.waitForURL(`${t.config.baseUrl}/`);
    expect(await amrOf(page)).toEqual(['pwd', 'otp', 'mfa']);

    // The step-up page of an application that asks for a passkey, which this user does not have.
    await page.goto(`${t.config.baseUrl}/sign-in/second-factor?return_to=%2Faccount&require=phr`);
    await page.waitForSelector('text=You have no passkey yet.');
    await shoot(page, 'sign-in-second-factor-passkey-required');
    await page.context().close();

    const again = await newPage();
    await password(again);
    await again.click('text=Use a recovery code');
    await again.fill('#recovery-code', recoveryCodes[0]!);
    await again.click('button:has-text("Verify")');
    await again.waitForSelector('#recovery-code-error');
    expect(await again.textContent('#recovery-code-error')).toContain('already used');
    await again.context().close();
  });

  it('tells a user without a second factor that an application asks for one', async () => {
    await t
      .get(UsersService)
      .create({ username: 'no-second-factor', email: 'nsf@example.com', name: 'No Second Factor', password: USER.password });
    const page = await newPage();
    await page.goto(`${t.config.baseUrl}/sign-in`);
    await page.fill('#login', 'no-second-factor');
    await page.fill('#password', USER.password);
    await page.click('button[type=submit]');
    await page.waitForURL(`${t.config.baseUrl}/`);
    await page.goto(`${t.config.baseUrl}/sign-in/second-factor?return_to=%2Faccount`);
    await page.waitForSelector('text=Two-factor authentication is not set up');
    await shoot(page, 'sign-in-second-factor-not-set-up');
    await page.context().close();
  });
});
