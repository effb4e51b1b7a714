import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createServer } from 'node:http';
import { ApplicationsService } from '../../src/oauth/clients/applications.service.js';
import { GrantsService } from '../../src/oauth/consent/grants.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { freePort, startTestApp, TestApp } from '../support/test-app.js';
import { launchChromium } from './chromium.js';

// Forms as people use them: reload and the back button never repeat an action or show a secret
// twice; forged, replayed and other sessions' forms are refused; return addresses stay on the site.

const USER = { username: 'dorothy', email: 'dorothy.vaughan@example.com', name: 'Dorothy Vaughan', password: 'fortran-for-everyone-1961' };

let t: TestApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;

async function signInAs(p: Page, username = USER.username, password = USER.password): Promise<void> {
  await p.goto(`${t.config.baseUrl}/sign-in`);
  await p.fill('#login', username);
  await p.fill('#password', password);
  await p.click('button[type=submit]');
  await p.waitForURL(`${t.config.baseUrl}/`);
}

const rows = (p: Page, selector = 'tbody tr') => p.locator(selector).count();

beforeAll(async () => {
  const port = await freePort();
  t = await startTestApp({ BASE_URL: `http://localhost:${port}`, PORT: String(port) }, { port });
  browser = await launchChromium();
  await t.get(UsersService).create(USER, { emailVerified: true });
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  await signInAs(page);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('reload and back after a form', () => {
  it('creating a token: a reload creates no second token, and neither reload nor back shows the token again', async () => {
    await page.goto(`${t.config.baseUrl}/account`);
    await page.fill('#token-name', 'nightly');
    await page.check('input[value=api]');
    await page.click('text=Create token');
    const token = (await page.textContent('#new-token'))!.trim();
    expect(page.url()).toBe(`${t.config.baseUrl}/account`);
    await page.reload();
    expect(await page.content()).not.toContain(token);
    expect(await rows(page)).toBe(1);
    await page.goto(`${t.config.baseUrl}/applications`);
    await page.goBack();
    expect(await page.content()).not.toContain(token);
    expect(await rows(page)).toBe(1);
  });

  it('registering an application: it has its own address, a reload registers nothing more and hides the secret', async () => {
    await page.goto(`${t.config.baseUrl}/applications`);
    await page.fill('#app-name', 'Reload Test');
    await page.fill('#redirect-uris', 'http://localhost:4000/callback');
    await page.click('text=Register application');
    await page.waitForSelector('#client-secret');
    const secret = (await page.textContent('#client-secret'))!.trim();
    expect(page.url()).toMatch(new RegExp(`^${t.config.baseUrl}/applications/[0-9a-f-]{36}$`));
    await page.reload();
    expect(await page.content()).not.toContain(secret);
    expect(await page.locator('#client-id').count()).toBe(1);
    await page.goto(`${t.config.baseUrl}/applications`);
    expect(await rows(page)).toBe(1);
  });

  it('regenerating a secret asks first; a reload neither regenerates again nor shows it', async () => {
    await page.goto(`${t.config.baseUrl}/applications`);
    await page.click('text=Reload Test');
    const address = page.url();
    await page.click('text=Regenerate secret (replace every secret)…');
    await page.waitForSelector('text=Regenerate the secret of “Reload Test”?');
    await page.click('button:has-text("Regenerate secret")');
    await page.waitForSelector('#client-secret');
    const secret = (await page.textContent('#client-secret'))!.trim();
    expect(page.url()).toBe(address);
    await page.reload();
    expect(await page.content()).not.toContain(secret);
    // The secret shown is the one that works: a reload did not replace it.
    const clientId = (await page.textContent('#client-id'))!.trim();
    const introspect = await fetch(`${t.url}/oauth/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: clientId, client_secret: secret, token: 'x' }).toString(),
    });
    expect(introspect.status).toBe(200);
  });

  it('saving the profile and revoking a token: a reload repeats nothing', async () => {
    await page.goto(`${t.config.baseUrl}/account`);
    await page.fill('#profile-name', 'Dorothy J. Vaughan');
    await page.click('text=Save profile');
    await page.waitForSelector('text=Profile saved.');
    await page.reload();
    expect(await page.locator('text=Profile saved.').count()).toBe(0);
    await page.click('text=Revoke…');
    await page.click('button:has-text("Revoke token")');
    await page.waitForSelector('text=revoked. Requests using it now fail.');
    await page.reload();
    expect(await page.locator('text=revoked. Requests using it now fail.').count()).toBe(0);
    expect(page.url()).toBe(`${t.config.baseUrl}/account`);
  });
});

describe('forms that did not come from this session', () => {
  it("refuses a form carrying another session's token, and a token replayed after signing in again", async () => {
    // Another browser (another session of the same user) lends its token.
    const other = await (await browser.newContext()).newPage();
    await signInAs(other);
    await other.goto(`${t.config.baseUrl}/account`);
    const foreign = await other.inputValue('form[action="/account/tokens"] input[name=_csrf]');

    await page.goto(`${t.config.baseUrl}/account`);
    const before = await rows(page);
    await page.fill('#token-name', 'foreign token');
    await page.check('input[value=read_api]');
    await page
      .locator('form[action="/account/tokens"] input[name=_csrf]')
      .evaluate((el, value) => ((el as unknown as { value: string }).value = value), foreign);
    await page.click('text=Create token');
    await page.waitForSelector('text=Form expired');

    // A token from before signing out and in again.
    await page.goto(`${t.config.baseUrl}/account`);
    const old = await page.inputValue('form[action="/account/tokens"] input[name=_csrf]');
    await page.click('text=Menu').catch(() => undefined);
    await page.click('button:has-text("Sign out")');
    await signInAs(page);
    await page.goto(`${t.config.baseUrl}/account`);
    await page.fill('#token-name', 'replayed token');
    await page.check('input[value=read_api]');
    await page
      .locator('form[action="/account/tokens"] input[name=_csrf]')
      .evaluate((el, value) => ((el as unknown as { value: string }).value = value), old);
    await page.click('text=Create token');
    await page.waitForSelector('text=Form expired');

    await page.goto(`${t.config.baseUrl}/account`);
    expect(await rows(page)).toBe(before);
    await other.close();
  });

  it('creates nothing from a form posted by a page with an opaque origin (Origin: null)', async () => {
    await page.goto(`${t.config.baseUrl}/account`);
    const before = await rows(page);
    const token = await page.inputValue('form[action="/account/tokens"] input[name=_csrf]');
    // Even with this session's token in the form, a sandboxed page (opaque origin) creates nothing.
    await page.goto('about:blank');
    await page.setContent(
      `<iframe sandbox="allow-forms allow-scripts" srcdoc='<form id="f" method="post" action="${t.config.baseUrl}/account/tokens"><input name="_csrf" value="${token}"><input name="name" value="from null"><input name="scopes" value="api"></form>'></iframe>`,
    );
    const frame = await (await page.waitForSelector('iframe'))!.contentFrame();
    await frame!.waitForSelector('#f', { state: 'attached' });
    const posted = page.waitForRequest((req) => req.url() === `${t.config.baseUrl}/account/tokens` && req.method() === 'POST', {
      timeout: 10_000,
    });
    await frame!.evaluate('document.getElementById("f").submit()'); // a string: the tests' TypeScript has no DOM types
    expect((await posted).headers().origin).toBe('null');
    await page.goto(`${t.config.baseUrl}/account`);
    expect(await rows(page)).toBe(before);
    expect(await page.content()).not.toContain('from null');
  });
});

describe('return addresses', () => {
  it.each(['/..//evil.example', '/.//evil.example', '/a/..//evil.example', '/%2e%2e//evil.example', 'https://evil.example/'])(
    'stay on the site for return_to=%s, signing in and already signed in',
    async (value) => {
      const fresh = await (await browser.newContext()).newPage();
      await fresh.goto(`${t.config.baseUrl}/sign-in?return_to=${encodeURIComponent(value)}`);
      await fresh.fill('#login', USER.username);
      await fresh.fill('#password', USER.password);
      await fresh.click('button[type=submit]');
      await fresh.waitForLoadState();
      expect(new URL(fresh.url()).origin).toBe(t.config.baseUrl);
      await fresh.goto(`${t.config.baseUrl}/sign-in?return_to=${encodeURIComponent(value)}`);
      expect(new URL(fresh.url()).origin).toBe(t.config.baseUrl);
      await fresh.close();
    },
  );
});

describe('a returning user of an OAuth application', () => {
  it('signs in and goes straight back to the application (form-action allows the registered client, and only it)', async () => {
    const port = await freePort();
    const callback = `http://127.0.0.1:${port}/callback`;
    const arrived: string[] = [];
    const client = createServer((req, res) => {
      if (req.url!.startsWith('/callback')) arrived.push(req.url!);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<p id="back">Back at the client</p>');
    });
    await new Promise<void>((done) => client.listen(port, '127.0.0.1', done));
    try {
      const user = await t.get(UsersService).getByUsername(USER.username);
      const { application } = await t.get(ApplicationsService).create(user.id, {
        name: 'Returning Client',
        redirectUris: [callback],
        scopes: ['openid', 'api'],
      });
      await t.get(GrantsService).remember(user.id, application.id, ['openid', 'api']);
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: application.clientId,
        redirect_uri: callback,
        scope: 'openid api',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        state: 'returning',
      });
      const fresh = await (await browser.newContext()).newPage();
      await fresh.goto(`${t.config.baseUrl}/oauth/authorize?${query}`);
      await fresh.waitForSelector('#login');
      await fresh.fill('#login', USER.username);
      await fresh.fill('#password', USER.password);
      await fresh.click('button[type=submit]');
      await fresh.waitForSelector('#back');
      expect(arrived).toHaveLength(1);
      expect(new URL(arrived[0]!, callback).searchParams.get('state')).toBe('returning');
      expect(new URL(arrived[0]!, callback).searchParams.get('code')).toBeTruthy();
      // A sign-in page that returns anywhere else allows only this site.
      const plain = await fetch(`${t.config.baseUrl}/sign-in?return_to=%2Faccount`);
      expect(plain.headers.get('content-security-policy')).toContain("form-action 'self';");
      const forged = await fetch(
        `${t.config.baseUrl}/sign-in?return_to=${encodeURIComponent(`/oauth/authorize?${query}`.replace(encodeURIComponent(callback), encodeURIComponent('https://evil.example/cb')))}`,
      );
      expect(forged.headers.get('content-security-policy')).not.toContain('evil.example');
      await fresh.close();
    } finally {
      await new Promise<void>((done) => client.close(() => done()));
    }
  });
});
