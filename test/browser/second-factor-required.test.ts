import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { PersonalTokensService } from '../../src/personal-tokens/personal-tokens.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { createOrganizer, mutate } from '../support/events.js';
import { ROOT } from '../support/processes.js';
import { freePort, startTestApp, TestApp } from '../support/test-app.js';
import { launchChromium } from './chromium.js';
import { OVERFLOWING } from './page-fit.js';

// A member of an organizer that requires a second factor, without one: the notice on the account and
// security pages (which organizer, by when), at 390 and 1280 px, and gone once the deadline is met by
// setting one up.

const SHOTS = resolve(ROOT, 'docs/screenshots');
const WIDTHS = [
  { width: 390, height: 844 },
  { width: 1280, height: 800 },
];
const MEMBER = {
  username: 'dorothy-vaughan',
  email: 'dorothy.vaughan@langley.example.com',
  name: 'Dorothy Vaughan',
  password: 'fortran-west-1949',
};
const OWNER = {
  username: 'katherine-johnson',
  email: 'katherine.johnson@langley.example.com',
  name: 'Katherine Johnson',
  password: 'orbit-math-1962',
};

let t: TestApp;
let browser: Browser;

beforeAll(async () => {
  const port = await freePort();
  t = await startTestApp({ BASE_URL: `http://localhost:${port}`, PORT: String(port) }, { port });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function shoot(page: Page, name: string): Promise<void> {
  for (const viewport of WIDTHS) {
    await page.setViewportSize(viewport);
    expect(await page.evaluate<string[]>(OVERFLOWING)).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/${name}-${viewport.width}.png`, fullPage: true });
  }
}

it('shows the member which organizer requires a second factor and by when, on the account and security pages', async () => {
  const users = t.get(UsersService);
  const owner = await users.create(OWNER, { emailVerified: true });
  const member = await users.create(MEMBER, { emailVerified: true });
  // The owner has an authenticator app (written as the tests of the requirement do), which requiring one asks of them.
  await t.get(DataSource).query(`UPDATE users SET totp_secret = 'sealed-for-the-test', totp_enabled_at = now() WHERE id = $1`, [owner.id]);
  const { token } = await t.get(PersonalTokensService).create(owner.id, { name: 'setup', scopes: ['api'] });
  const organizer = await createOrganizer(t, token, { name: 'Langley Research Center' });
  await mutate(t, token, 'addOrganizerMember', { organizerId: organizer.id, username: member.username, role: 'ADMIN' }, 'member { role }');
  await mutate(
    t,
    token,
    'updateOrganizer',
    { organizerId: organizer.id, requireSecondFactor: true, secondFactorGraceHours: 72 },
    'organizer { secondFactorRequiredSince }',
  );

  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(`${t.config.baseUrl}/sign-in`);
  await page.fill('#login', MEMBER.username);
  await page.fill('#password', MEMBER.password);
  await Promise.all([page.waitForURL(`${t.config.baseUrl}/`), page.click('button[type=submit]')]);

  await page.goto(`${t.config.baseUrl}/account`);
  const notice = page.locator('#second-factor-required');
  await notice.waitFor();
  expect(await notice.textContent()).toContain('Langley Research Center requires it by');
  await shoot(page, 'account-second-factor-required');
  await page.goto(`${t.config.baseUrl}/account/security`);
  await notice.waitFor();
  await shoot(page, 'security-second-factor-required');

  // Set up (as the tests of the requirement write it): the notice goes.
  await t.get(DataSource).query(`UPDATE users SET totp_secret = 'sealed-for-the-test', totp_enabled_at = now() WHERE id = $1`, [member.id]);
  await page.goto(`${t.config.baseUrl}/account`);
  expect(await page.locator('#second-factor-required').count()).toBe(0);
}, 60_000);
