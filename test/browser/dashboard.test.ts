import { createServer, Server } from 'node:http';
import { resolve } from 'node:path';
import type { Browser, ConsoleMessage, Page, Request } from 'playwright-core';
import { graphql } from '../support/http.js';
import { ROOT } from '../support/processes.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { waitUntil } from '../support/mail-flows.js';
import { freePort, startTestApp, TestApp } from '../support/test-app.js';
import { launchChromium } from './chromium.js';

const SHOTS = resolve(ROOT, 'docs/screenshots');

let t: TestApp;
let smtp: TestSmtpServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  // Pages are opened at BASE_URL's host, as users would (forms check the origin).
  const port = await freePort();
  smtp = await startSmtpServer();
  t = await startTestApp({ BASE_URL: `http://localhost:${port}`, PORT: String(port), SMTP_URL: smtp.url }, { port });
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await smtp?.close();
});

describe('a new user in the browser', () => {
  it('signs up, creates a personal token, uses it, revokes it, and the next request fails', async () => {
    await page.goto(`${t.config.baseUrl}/sign-up`);
    await page.fill('#name', 'Katherine Johnson');
    await page.fill('#username', 'katherine');
    await page.fill('#email', 'katherine@example.com');
    await page.fill('#password', 'orbital-mechanics-1962');
    await page.click('button[type=submit]');
    await page.waitForURL(`${t.config.baseUrl}/check-email?about=sign-up`);

    // The verification link, as the new user reads it in their mail; then sign in.
    await waitUntil(
      () => smtp.arrivals.some((a) => a.to.includes('katherine@example.com')),
      15_000,
      () => 'no verification mail',
    );
    const mail = smtp.arrivals.find((a) => a.to.includes('katherine@example.com'))!.mail;
    const link = mail.text!.match(/http:\/\/\S+\/verify-email\?token=[A-Za-z0-9_-]+/)![0];
    await page.goto(link);
    await page.click('button:has-text("Verify my address")');
    await page.waitForSelector('text=Your e-mail address is verified');
    await page.click('text=Sign in');
    await page.fill('#login', 'katherine');
    await page.fill('#password', 'orbital-mechanics-1962');
    await page.click('button:has-text("Sign in")');
    await page.waitForURL(`${t.config.baseUrl}/`);

    await page.click('text=Account & tokens');
    await page.fill('#token-name', 'reporting script');
    await page.check('input[value=api]');
    await page.click('text=Create token');
    const token = (await page.textContent('#new-token'))!.trim();
    expect(token).toMatch(/^agora_pat_/);
    await page.screenshot({ path: `${SHOTS}/account-token-created.png`, fullPage: true });

    expect((await graphql(t.url, '{ viewer { name } }', { privateToken: token })).body.data?.viewer.name).toBe('Katherine Johnson');

    await page.click('text=Revoke…');
    await page.click('button:has-text("Revoke token")');
    await page.waitForSelector('text=revoked. Requests using it now fail.');
    expect((await graphql(t.url, '{ viewer { name } }', { privateToken: token })).status).toBe(401);
  });

  it('runs a query in GraphiQL as the signed-in user, with nothing from other sites and no CSP violation', async () => {
    const requests: string[] = [];
    const problems: string[] = [];
    const onRequest = (request: Request) => requests.push(request.url());
    const onConsole = (message: ConsoleMessage) => {
      if (message.type() === 'error' || /Content[- ]Security[- ]Policy/i.test(message.text())) problems.push(message.text());
    };
    const onPageError = (error: Error) => problems.push(error.message);
    page.on('request', onRequest);
    page.on('console', onConsole);
    page.on('pageerror', onPageError);
    await page.setViewportSize({ width: 1280, height: 800 });
    try {
      await page.goto(`${t.config.baseUrl}/account`);
      await page.click('text=API explorer');
      await page.waitForSelector('.graphiql-query-editor .CodeMirror');
      expect(await page.locator('#token').count()).toBe(0);

      // The starter query, run with GraphiQL's button: the session answers, no token pasted.
      await page.click('.graphiql-execute-button');
      await page.locator('.result-window').filter({ hasText: '"name": "Katherine Johnson"' }).waitFor();
      // The schema's introspection, then the query: both to /graphql on this origin.
      expect(requests.filter((url) => url === `${t.config.baseUrl}/graphql`).length).toBeGreaterThanOrEqual(2);
      await page.screenshot({ path: `${SHOTS}/api-explorer.png` });

      // A dialog (its scroll lock adds a <style> element, allowed by this page's nonce only).
      await page.click('button[aria-label="Open settings dialog"]');
      await page.waitForSelector('.graphiql-dialog >> text=Settings');
      await page.keyboard.press('Escape');

      // The docs, from introspection: the Query type with the schema's descriptions.
      await page.click('button[aria-label="Show Documentation Explorer"]');
      await page.click('.graphiql-doc-explorer a:has-text("Query")');
      await page.waitForSelector('.graphiql-doc-explorer >> text=Entry point of every read operation.');
      await page.screenshot({ path: `${SHOTS}/api-explorer-docs.png` });

      // Completion from the schema: typing in the editor offers the Query type's fields.
      await page.click('.graphiql-query-editor .CodeMirror-line >> nth=0');
      await page.keyboard.press('Control+a');
      await page.keyboard.type('{ vie');
      await page.waitForSelector('.CodeMirror-hints >> text=viewer');
      await page.keyboard.press('Escape');

      expect(requests.filter((url) => !url.startsWith(t.config.baseUrl))).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      page.off('request', onRequest);
      page.off('console', onConsole);
      page.off('pageerror', onPageError);
      await page.setViewportSize({ width: 1100, height: 800 });
    }
  });

  it('is told about a duplicate username next to the field', async () => {
    const fresh = await browser.newPage();
    await fresh.goto(`${t.config.baseUrl}/sign-up`);
    await fresh.fill('#name', 'Someone Else');
    await fresh.fill('#username', 'katherine');
    await fresh.fill('#email', 'someone@example.com');
    await fresh.fill('#password', 'another-long-passphrase');
    await fresh.click('button[type=submit]');
    await fresh.waitForSelector('#username-error');
    expect(await fresh.textContent('#username-error')).toBe('Username is already taken');
    await fresh.screenshot({ path: `${SHOTS}/sign-up-error.png` });
    await fresh.close();
  });
});

describe('OAuth consent in the browser', () => {
  let client: Server;
  let callbackUrl: string;
  const arrived: URL[] = [];

  beforeAll(async () => {
    const port = await freePort();
    callbackUrl = `http://localhost:${port}/callback`;
    client = createServer((req, res) => {
      arrived.push(new URL(req.url!, callbackUrl));
      res.writeHead(200, { 'content-type': 'text/html' }).end('<p id="back">Back at the client</p>');
    });
    await new Promise<void>((done) => client.listen(port, 'localhost', done));
  });
  afterAll(() => new Promise<void>((done) => client.close(() => done())));

  it('registers an application, authorizes it, sees it under authorized apps, revokes it: the token stops working', async () => {
    // The developer (signed in from the first test) registers the application.
    await page.goto(`${t.config.baseUrl}/applications`);
    await page.fill('#app-name', 'Mission Planner');
    await page.fill('#redirect-uris', callbackUrl);
    await page.click('button:has-text("Register application")');
    const clientId = (await page.textContent('#client-id'))!.trim();
    const clientSecret = (await page.textContent('#client-secret'))!.trim();
    await page.screenshot({ path: `${SHOTS}/application-registered.png`, fullPage: true });

    // A user signs in through the authorization request and approves.
    const { UsersService } = await import('../../src/users/users.service.js');
    await t
      .get(UsersService)
      .create({ username: 'dorothy', email: 'dorothy@example.com', name: 'Dorothy Vaughan', password: 'fortran-pioneer-1961' });
    const user = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'; // RFC 7636 Appendix B
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: callbackUrl,
      scope: 'openid profile api',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      state: 'browser-state',
    });
    await user.goto(`${t.config.baseUrl}/oauth/authorize?${query}`);
    await user.waitForSelector('#login');
    await user.fill('#login', 'dorothy');
    await user.fill('#password', 'fortran-pioneer-1961');
    await user.screenshot({ path: `${SHOTS}/sign-in.png` });
    await user.click('button[type=submit]');
    await user.waitForSelector('text=Mission Planner wants to use your Agora account');
    await user.screenshot({ path: `${SHOTS}/consent.png` });
    await user.click('button:has-text("Authorize")');
    await user.waitForSelector('#back');

    const back = arrived.find((u) => u.pathname === '/callback')!;
    expect(back.searchParams.get('state')).toBe('browser-state');
    expect(back.searchParams.get('iss')).toBe(t.config.baseUrl);
    const exchange = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uri: callbackUrl,
        code: back.searchParams.get('code')!,
        code_verifier: verifier,
      }).toString(),
    });
    const { access_token } = (await exchange.json()) as { access_token: string };
    expect((await graphql(t.url, '{ viewer { name } }', { bearer: access_token })).body.data?.viewer.name).toBe('Dorothy Vaughan');

    // The user finds it under authorized applications and revokes it.
    await user.goto(`${t.config.baseUrl}/account/authorized`);
    await user.waitForSelector('text=Mission Planner');
    await user.screenshot({ path: `${SHOTS}/authorized-applications.png` });
    await user.click('text=Revoke access…');
    await user.waitForSelector('text=Revoke access for “Mission Planner”?');
    await user.click('button:has-text("Revoke access")');
    await user.waitForSelector('text=Access for “Mission Planner” revoked.');
    expect((await graphql(t.url, '{ viewer { name } }', { bearer: access_token })).status).toBe(401);
    await user.close();
  });

  it('refuses a forged form posted from another site, creating nothing', async () => {
    const victim = page; // signed in as katherine
    const tokensBefore = await victim.goto(`${t.config.baseUrl}/account`).then(() => victim.locator('tbody tr').count());
    // An attacker's page (another origin) that posts to Agora without the CSRF token.
    await victim.goto(`${callbackUrl.replace('/callback', '/attacker')}`);
    await victim.setContent(
      `<form id="f" method="post" action="${t.config.baseUrl}/account/tokens"><input name="name" value="stolen"><input name="scopes" value="api"></form>`,
    );
    await Promise.all([
      victim.waitForNavigation(),
      victim.locator('#f').evaluate((form) => (form as unknown as { submit(): void }).submit()),
    ]);
    expect(await victim.content()).not.toContain('agora_pat_');
    await victim.goto(`${t.config.baseUrl}/account`);
    expect(await victim.locator('tbody tr').count()).toBe(tokensBefore);
    expect(await victim.content()).not.toContain('stolen');
  });

  it('after sign-in, never follows a return address to another site', async () => {
    const fresh = await (await browser.newContext()).newPage();
    await fresh.goto(`${t.config.baseUrl}/sign-in?return_to=${encodeURIComponent('https://evil.example/phish')}`);
    await fresh.fill('#login', 'katherine');
    await fresh.fill('#password', 'orbital-mechanics-1962');
    await fresh.click('button[type=submit]');
    await fresh.waitForURL(`${t.config.baseUrl}/`);
    await fresh.close();
  });

  it('shows one generic message for a wrong password', async () => {
    const fresh = await browser.newPage();
    await fresh.goto(`${t.config.baseUrl}/sign-in`);
    await fresh.fill('#login', 'katherine');
    await fresh.fill('#password', 'not-her-password');
    await fresh.click('button[type=submit]');
    await fresh.waitForSelector('text=Incorrect username, email or password.');
    await fresh.close();
  });
});
