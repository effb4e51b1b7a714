import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { renderAccountMail, type AccountMail } from '../../src/mail/messages/account-mail.js';
import { UsersService } from '../../src/users/users.service.js';
import { mailedLink } from '../support/account-links.js';
import { ROOT } from '../support/processes.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { freePort, startTestApp, TestApp } from '../support/test-app.js';
import { launchChromium } from './chromium.js';
import { expectNoHorizontalOverflow } from './page-fit.js';

// E-mail verification and password reset in Chromium: the reset link read from the test SMTP server and
// used once (a second use refused); every page of theirs, and their mails, at 390 px and 1280 px without
// sideways scrolling. Screenshots: docs/screenshots/<name>-<width>.png.

const SHOTS = resolve(ROOT, 'docs/screenshots');
const WIDTHS = [
  { width: 390, height: 844 },
  { width: 1280, height: 800 },
];

/** What passes the right edge of the viewport (elements and text), and a page wider than it. */
// Whether a page fits: the shared check (page-fit.ts), which lets a box that clips its content (the header's
// name, cut with an ellipsis) keep it.

// Long names and addresses on purpose: they are what overflows a phone.
const USER = {
  username: 'mary-winston-jackson-langley',
  email: 'mary.winston.jackson@supersonic-pressure-tunnel.langley.example.com',
  name: 'Mary Winston Jackson',
  password: 'supersonic-pressure-tunnel-1958',
};
const NEW_EMAIL = 'mary.jackson@aeronautical-engineering.hampton-roads.example.org';

let t: TestApp;
let smtp: TestSmtpServer;
let browser: Browser;

beforeAll(async () => {
  smtp = await startSmtpServer();
  const port = await freePort();
  t = await startTestApp(
    { BASE_URL: `http://localhost:${port}`, PORT: String(port), SMTP_URL: smtp.url, JOBS_RETRY_DELAY_SECONDS: '1' },
    { port },
  );
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await smtp?.close();
});

async function shoot(page: Page, name: string, width: number): Promise<void> {
  await page.screenshot({ path: `${SHOTS}/${name}-${width}.png`, fullPage: true });
  await expectNoHorizontalOverflow(page);
}

async function signInAs(page: Page, login: string, password: string): Promise<void> {
  await page.goto(`${t.config.baseUrl}/sign-in`);
  await page.fill('#login', login);
  await page.fill('#password', password);
  await page.click('button:has-text("Sign in")');
  await page.waitForURL(`${t.config.baseUrl}/`);
}

describe('password reset in the browser', () => {
  it('reads the link from the mail, sets a new password once, and refuses the link the second time', async () => {
    const user = await t
      .get(UsersService)
      .create({ ...USER, username: 'reset-in-browser', email: 'reset-in-browser@example.com' }, { emailVerified: true });
    const page = await browser.newPage({ viewport: WIDTHS[0] });
    try {
      await page.goto(`${t.config.baseUrl}/sign-in`);
      await page.click('text=Forgot password?');
      await page.waitForURL(`${t.config.baseUrl}/forgot-password`);
      await page.fill('#email', user.email);
      await page.click('button:has-text("Send the link")');
      await page.waitForSelector('text=Check your e-mail');

      const link = await mailedLink(smtp, user.email, '/reset-password');
      await page.goto(`${t.config.baseUrl}${link}`);
      await page.fill('#password', 'a-brand-new-passphrase-1969');
      await page.click('button:has-text("Set the new password")');
      await page.waitForSelector('text=Password changed');

      await page.goto(`${t.config.baseUrl}${link}`);
      await page.waitForSelector('text=This link was already used');
      await signInAs(page, user.username, 'a-brand-new-passphrase-1969');
    } finally {
      await page.close();
    }
  });
});

describe.each(WIDTHS)('the account-link pages at $width px', (viewport) => {
  it('fit without scrolling sideways (screenshots of each)', async () => {
    const suffix = viewport.width;
    const email = `w${suffix}.${USER.email}`;
    const page = await browser.newPage({ viewport });
    try {
      // Sign-up, and the page it leads to.
      await page.goto(`${t.config.baseUrl}/sign-up`);
      await page.fill('#name', USER.name);
      await page.fill('#username', `${USER.username}-${suffix}`);
      await page.fill('#email', email);
      await page.fill('#password', USER.password);
      await page.click('button[type=submit]');
      await page.waitForSelector('text=Check your e-mail');
      await shoot(page, 'check-email', viewport.width);

      // Signed in, unverified: what the pages say, and the security page's e-mail section.
      await signInAs(page, email, USER.password);
      await page.goto(`${t.config.baseUrl}/account`);
      await page.waitForSelector('#verify-email');
      await shoot(page, 'account-unverified', viewport.width);
      await page.goto(`${t.config.baseUrl}/applications`);
      await page.waitForSelector('#verify-email');
      await shoot(page, 'applications-unverified', viewport.width);

      // The verification link.
      const link = await mailedLink(smtp, email, '/verify-email');
      await page.goto(`${t.config.baseUrl}${link}`);
      await page.waitForSelector('text=Verify my address');
      await shoot(page, 'verify-email', viewport.width);
      await page.click('button:has-text("Verify my address")');
      await page.waitForSelector('text=Your e-mail address is verified');
      await shoot(page, 'email-verified', viewport.width);
      await page.goto(`${t.config.baseUrl}${link}`);
      await page.waitForSelector('text=This link was already used');
      await shoot(page, 'link-used', viewport.width);
      await page.goto(`${t.config.baseUrl}/verify-email?token=not-a-token`);
      await page.waitForSelector('text=This link is not valid');
      await shoot(page, 'link-invalid', viewport.width);

      // A change of address waiting for its link.
      await page.goto(`${t.config.baseUrl}/account/security`);
      await page.fill('#new-email', `w${suffix}.${NEW_EMAIL}`);
      await page.fill('#email-current-password', USER.password);
      await page.click('button:has-text("Change e-mail address")');
      await page.waitForSelector('#pending-email');
      await shoot(page, 'security-email-pending', viewport.width);
      const change = await mailedLink(smtp, `w${suffix}.${NEW_EMAIL}`, '/verify-email');
      await page.goto(`${t.config.baseUrl}${change}`);
      await page.waitForSelector('text=Confirm my new address');
      await shoot(page, 'verify-new-email', viewport.width);

      // Password reset: the form, an error beside the field, the page after, an expired link.
      await page.click('button:has-text("Sign out")').catch(async () => {
        await page.click('header summary');
        await page.click('button:has-text("Sign out")');
      });
      await page.goto(`${t.config.baseUrl}/forgot-password`);
      await shoot(page, 'forgot-password', viewport.width);
      await page.fill('#email', 'not an address at all, but a very long string without an at sign in it');
      await page.click('button:has-text("Send the link")');
      await page.waitForSelector('#email-error');
      await shoot(page, 'forgot-password-error', viewport.width);
      await page.fill('#email', email);
      await page.click('button:has-text("Send the link")');
      await page.waitForSelector('text=Check your e-mail');
      await shoot(page, 'check-email-reset', viewport.width);
      const reset = await mailedLink(smtp, email, '/reset-password');
      await page.goto(`${t.config.baseUrl}${reset}`);
      await shoot(page, 'reset-password', viewport.width);
      await page.fill('#password', 'short');
      await page.click('button:has-text("Set the new password")');
      await page.waitForSelector('#password-error');
      await shoot(page, 'reset-password-error', viewport.width);
      await page.fill('#password', `${USER.password}-and-more`);
      await page.click('button:has-text("Set the new password")');
      await page.waitForSelector('text=Password changed');
      await shoot(page, 'password-reset', viewport.width);

      await page.goto(`${t.config.baseUrl}/forgot-password`);
      await page.fill('#email', email);
      await page.click('button:has-text("Send the link")');
      await page.waitForSelector('text=Check your e-mail');
      const later = await mailedLink(smtp, email, '/reset-password', 2);
      t.clock.advance(61 * 60_000);
      await page.goto(`${t.config.baseUrl}${later}`);
      await page.waitForSelector('text=This link has expired');
      await shoot(page, 'link-expired', viewport.width);
    } finally {
      await page.close();
    }
    expect(await t.get(DataSource).query(`SELECT 1 FROM users WHERE email = $1`, [email])).toHaveLength(1);
  }, 120_000);
});

const SAMPLES: AccountMail[] = [
  {
    kind: 'verify-email',
    recipient: { name: USER.name, email: USER.email },
    username: USER.username,
    url: `https://agora.example.com/verify-email?token=${'x'.repeat(65)}`,
  },
  {
    kind: 'change-email',
    recipient: { name: USER.name, email: NEW_EMAIL },
    username: USER.username,
    url: `https://agora.example.com/verify-email?token=${'y'.repeat(65)}`,
  },
  {
    kind: 'reset-password',
    recipient: { name: USER.name, email: USER.email },
    username: USER.username,
    url: `https://agora.example.com/reset-password?token=${'z'.repeat(65)}`,
  },
  {
    kind: 'sign-up-attempt',
    recipient: { name: USER.name, email: USER.email },
    username: USER.username,
    signInUrl: 'https://agora.example.com/sign-in',
    resetUrl: 'https://agora.example.com/forgot-password',
  },
];

describe.each(SAMPLES.map((message) => [message.kind, message] as const))('the %s mail', (kind, message) => {
  it.each(WIDTHS)('fits $width px without scrolling sideways, loading nothing', async (viewport) => {
    const mail = renderAccountMail(message);
    const page = await browser.newPage({ viewport });
    try {
      const requests: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith('data:')) requests.push(request.url());
      });
      await page.setContent(mail.html, { waitUntil: 'load' });
      expect(requests).toEqual([]);
      await shoot(page, `mail-account.${kind}`, viewport.width);
    } finally {
      await page.close();
    }
  });
});
