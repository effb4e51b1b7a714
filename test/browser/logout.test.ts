import type { Browser, Page } from 'playwright-core';
import jwt from 'jsonwebtoken';
import { createServer, Server } from 'node:http';
import { ApplicationsService } from '../../src/oauth/clients/applications.service.js';
import { SigningKeysService } from '../../src/oauth/keys/signing-keys.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { freePort, startTestApp, TestApp } from '../support/test-app.js';
import { launchChromium } from './chromium.js';

// RP-initiated logout in a real browser: the relying party is another site (127.0.0.1 against Agora's
// localhost), so its form post carries no SameSite=Lax session cookie, and the confirmation's redirect
// back to it must be allowed by the page's CSP form-action.

const USER = { username: 'mary-jackson', email: 'mary.jackson@example.com', name: 'Mary Jackson', password: 'wind-tunnel-engineer-1958' };

let t: TestApp;
let browser: Browser;
let rp: Server;
let rpUrl: string;
let clientId: string;
let userId: string;

/** The relying party's pages: a logout form posting to Agora, and the page Agora sends the browser back to. */
function relyingParty(): Server {
  return createServer((req, res) => {
    const url = new URL(req.url!, rpUrl);
    res.setHeader('content-type', 'text/html; charset=utf-8');
    if (url.pathname === '/logout') {
      const hint = url.searchParams.get('hint')!;
      res.end(`<!doctype html><form method="post" action="${t.config.baseUrl}/oauth/logout">
        <input type="hidden" name="id_token_hint" value="${hint}">
        <input type="hidden" name="post_logout_redirect_uri" value="${rpUrl}/signed-out">
        <input type="hidden" name="state" value="rp-state">
        <button type="submit">Log out</button></form>`);
      return;
    }
    res.end(`<!doctype html><p id="back">Back at the relying party: ${url.search}</p>`);
  });
}

async function signIn(page: Page): Promise<void> {
  await page.goto(`${t.config.baseUrl}/sign-in`);
  await page.fill('#login', USER.username);
  await page.fill('#password', USER.password);
  await page.click('button[type=submit]');
  await page.waitForURL(`${t.config.baseUrl}/`);
}

async function signedIn(page: Page): Promise<boolean> {
  await page.goto(`${t.config.baseUrl}/account`);
  return !new URL(page.url()).pathname.startsWith('/sign-in');
}

async function idTokenFor(): Promise<string> {
  const { kid, privateKey } = await t.get(SigningKeysService).activeKey();
  const now = Math.floor(Date.now() / 1000);
  return jwt.sign({ iss: t.config.baseUrl, sub: userId, aud: clientId, iat: now, exp: now + 3600 }, privateKey, {
    algorithm: 'RS256',
    keyid: kid,
  });
}

beforeAll(async () => {
  const port = await freePort();
  t = await startTestApp({ BASE_URL: `http://localhost:${port}`, PORT: String(port) }, { port });
  const rpPort = await freePort();
  rpUrl = `http://127.0.0.1:${rpPort}`;
  rp = relyingParty();
  await new Promise<void>((resolve) => rp.listen(rpPort, '127.0.0.1', resolve));
  browser = await launchChromium();
  const user = await t.get(UsersService).create(USER, { emailVerified: true });
  userId = user.id;
  const { application } = await t.get(ApplicationsService).create(user.id, {
    name: 'Wind Tunnel Scheduler',
    redirectUris: [`${rpUrl}/callback`],
    scopes: ['openid'],
    postLogoutRedirectUris: [`${rpUrl}/signed-out`],
  });
  clientId = application.clientId;
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => rp?.close(resolve));
  await t?.close();
});

describe('RP-initiated logout in a browser', () => {
  it('follows the relying party’s cross-site form post: signed out, and back with state', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await signIn(page);
      await page.goto(`${rpUrl}/logout?hint=${await idTokenFor()}`);
      await page.click('text=Log out');
      await page.waitForURL(`${rpUrl}/signed-out?state=rp-state`);
      expect(await signedIn(page)).toBe(false);
    } finally {
      await context.close();
    }
  });

  it('asks to confirm without a hint, then the confirmation’s redirect reaches the relying party', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await signIn(page);
      const query = new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: `${rpUrl}/signed-out`, state: 'confirmed' });
      await page.goto(`${t.config.baseUrl}/oauth/logout?${query.toString()}`);
      await page.waitForSelector('text=Wind Tunnel Scheduler');
      expect(await signedIn(page)).toBe(true);
      await page.goto(`${t.config.baseUrl}/oauth/logout?${query.toString()}`);
      await page.click('text=Yes, sign out');
      await page.waitForURL(`${rpUrl}/signed-out?state=confirmed`);
      expect(await signedIn(page)).toBe(false);
    } finally {
      await context.close();
    }
  });
});
