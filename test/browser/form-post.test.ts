import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { ApplicationsService } from '../../src/oauth/clients/applications.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { freePort, startTestApp, TestApp } from '../support/test-app.js';
import { launchChromium } from './chromium.js';

// response_mode=form_post in a real browser: Agora answers with a page whose script (allowed by its
// hash alone) posts the response to the client, another site (127.0.0.1 against Agora's localhost),
// which the page's CSP form-action must allow. A tiny receiver stands for the client.

const USER = {
  username: 'katherine-j',
  email: 'katherine.johnson@example.com',
  name: 'Katherine Johnson',
  password: 'orbital-mechanics-1962',
};

let t: TestApp;
let browser: Browser;
let receiver: Server;
let rpUrl: string;
let clientId: string;
let clientSecret: string;
const received: { method: string; contentType: string | undefined; body: URLSearchParams }[] = [];

/** The client: its callback records what it was sent; /start posts an authorization request to Agora as a form. */
function client(): Server {
  return createServer((req, res) => {
    const url = new URL(req.url!, rpUrl);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      if (url.pathname === '/start') {
        const fields = Object.fromEntries(url.searchParams);
        res.end(`<!doctype html><form method="post" action="${t.config.baseUrl}/oauth/authorize">
          ${Object.entries(fields)
            .map(([name, value]) => `<input type="hidden" name="${name}" value="${value}">`)
            .join('')}
          <button type="submit">Sign in with Agora</button></form>`);
        return;
      }
      // Only the callback's posts are the client's answers (the browser also asks for /favicon.ico).
      if (url.pathname === '/callback' && req.method === 'POST')
        received.push({
          method: req.method!,
          contentType: req.headers['content-type'],
          body: new URLSearchParams(Buffer.concat(chunks).toString()),
        });
      res.end('<!doctype html><p id="received">Received</p>');
    });
  });
}

function authorizationParams(state: string): { params: Record<string, string>; verifier: string } {
  const verifier = randomBytes(32).toString('base64url');
  return {
    verifier,
    params: {
      response_type: 'code',
      response_mode: 'form_post',
      client_id: clientId,
      redirect_uri: `${rpUrl}/callback`,
      scope: 'openid',
      state,
      nonce: `nonce-${state}`,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    },
  };
}

async function signIn(page: Page): Promise<void> {
  await page.goto(`${t.config.baseUrl}/sign-in`);
  await page.fill('#login', USER.username);
  await page.fill('#password', USER.password);
  await page.click('button[type=submit]');
  await page.waitForURL(`${t.config.baseUrl}/`);
}

/** CSP violations the browser reports on the console: there must be none. */
function cspViolations(page: Page): string[] {
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  return violations;
}

async function redeem(code: string, verifier: string): Promise<number> {
  const res = await fetch(`${t.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: `${rpUrl}/callback`,
      code_verifier: verifier,
      client_id: clientId,
      client_secret: clientSecret,
    }),
  });
  return res.status;
}

beforeAll(async () => {
  const port = await freePort();
  t = await startTestApp({ BASE_URL: `http://localhost:${port}`, PORT: String(port) }, { port });
  const rpPort = await freePort();
  rpUrl = `http://127.0.0.1:${rpPort}`;
  receiver = client();
  await new Promise<void>((resolve) => receiver.listen(rpPort, '127.0.0.1', resolve));
  browser = await launchChromium();
  const user = await t.get(UsersService).create(USER, { emailVerified: true });
  const registered = await t.get(ApplicationsService).create(user.id, {
    name: 'Trajectory Planner',
    redirectUris: [`${rpUrl}/callback`],
    scopes: ['openid'],
  });
  clientId = registered.application.clientId;
  clientSecret = registered.clientSecret!;
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await t?.close();
});

async function withContext(options: { javaScriptEnabled: boolean }, run: (page: Page, context: BrowserContext) => Promise<void>) {
  const context = await browser.newContext(options);
  try {
    await run(await context.newPage(), context);
  } finally {
    await context.close();
  }
}

describe('response_mode=form_post in a browser', () => {
  it('posts code, state and iss to the client after consent, with no CSP violation', async () => {
    await withContext({ javaScriptEnabled: true }, async (page) => {
      const violations = cspViolations(page);
      await signIn(page);
      const { params, verifier } = authorizationParams('approve-1');
      await page.goto(`${t.config.baseUrl}/oauth/authorize?${new URLSearchParams(params).toString()}`);
      await page.click('button[value=approve]');
      await page.waitForURL(`${rpUrl}/callback`);
      await page.waitForSelector('#received');
      const last = received.at(-1)!;
      expect(last.method).toBe('POST');
      expect(last.contentType).toBe('application/x-www-form-urlencoded');
      expect([...last.body.keys()].sort()).toEqual(['code', 'iss', 'state']);
      expect(last.body.get('state')).toBe('approve-1');
      expect(last.body.get('iss')).toBe(t.config.baseUrl);
      expect(await redeem(last.body.get('code')!, verifier)).toBe(200);
      expect(violations).toEqual([]);
    });
  });

  it('starts from the client’s cross-site form post to /oauth/authorize, and with consent remembered posts back at once', async () => {
    await withContext({ javaScriptEnabled: true }, async (page) => {
      const violations = cspViolations(page);
      await signIn(page);
      const { params, verifier } = authorizationParams('posted-2');
      await page.goto(`${rpUrl}/start?${new URLSearchParams(params).toString()}`);
      const before = received.length;
      await page.click('text=Sign in with Agora');
      await page.waitForURL(`${rpUrl}/callback`);
      await page.waitForSelector('#received');
      expect(received.length).toBe(before + 1);
      const last = received.at(-1)!;
      expect(last.body.get('state')).toBe('posted-2');
      expect(await redeem(last.body.get('code')!, verifier)).toBe(200);
      expect(violations).toEqual([]);
    });
  });
});
