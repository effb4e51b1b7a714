import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { ApplicationsService } from '../../src/oauth/clients/applications.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { freePort, startTestApp, TestApp } from '../support/test-app.js';
import { launchChromium } from './chromium.js';

// A single-page app on another origin signs in as a public client (PKCE with WebCrypto, no secret),
// exchanges the code with fetch and calls /graphql with the token: CORS allowed for its origin only.

const USER = { username: 'mary-jackson', email: 'mary@example.com', name: 'Mary Winston Jackson', password: 'wind-tunnel-1958-langley' };

/**
 * The whole app: a button that starts the authorization request, and a callback that exchanges the
 * code at the token endpoint and asks the API who signed in. Written as a browser app would be.
 */
function spaHtml(agora: string, clientId: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Flight log (SPA)</title></head>
<body>
<button id="sign-in">Sign in with Agora</button>
<p id="viewer"></p>
<p id="error"></p>
<script type="module">
const AGORA = ${JSON.stringify(agora)};
const CLIENT_ID = ${JSON.stringify(clientId)};
const REDIRECT_URI = location.origin + '/callback';
const base64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const random = () => base64url(crypto.getRandomValues(new Uint8Array(32)));

document.getElementById('sign-in').addEventListener('click', async () => {
  const verifier = random();
  const state = random();
  sessionStorage.setItem('pkce', JSON.stringify({ verifier, state }));
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  location.assign(AGORA + '/oauth/authorize?' + new URLSearchParams({
    response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, scope: 'openid profile api',
    code_challenge: challenge, code_challenge_method: 'S256', state,
  }));
});

if (location.pathname === '/callback') {
  try {
    const params = new URLSearchParams(location.search);
    const { verifier, state } = JSON.parse(sessionStorage.getItem('pkce'));
    if (params.get('state') !== state) throw new Error('state mismatch');
    const tokenResponse = await fetch(AGORA + '/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: params.get('code'), redirect_uri: REDIRECT_URI, client_id: CLIENT_ID, code_verifier: verifier }),
    });
    const tokens = await tokenResponse.json();
    if (!tokenResponse.ok) throw new Error(tokens.error);
    const api = await fetch(AGORA + '/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' + tokens.access_token },
      body: JSON.stringify({ query: '{ viewer { name } }' }),
    });
    const { data } = await api.json();
    document.getElementById('viewer').textContent = 'Signed in as ' + data.viewer.name;
  } catch (err) {
    document.getElementById('error').textContent = String(err);
  }
}
</script>
</body></html>`;
}

/** A page on an origin no application registered, trying the same calls. */
function foreignHtml(agora: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Not registered</title></head>
<body><pre id="results"></pre>
<script type="module">
const AGORA = ${JSON.stringify(agora)};
const attempts = {
  token: () => fetch(AGORA + '/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=x' }),
  graphql: () => fetch(AGORA + '/graphql', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer agoa_x' }, body: JSON.stringify({ query: '{ viewer { name } }' }) }),
  discovery: () => fetch(AGORA + '/.well-known/openid-configuration'),
};
const results = {};
for (const [name, attempt] of Object.entries(attempts)) {
  try {
    const res = await attempt();
    results[name] = 'read ' + res.status;
  } catch (err) {
    results[name] = 'rejected ' + err.name;
  }
}
document.getElementById('results').textContent = JSON.stringify(results);
</script>
</body></html>`;
}

/** Serves `html` for every path, on a free port of 127.0.0.1: an origin other than Agora's (localhost). */
async function serve(html: () => string): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(html());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let t: TestApp;
let browser: Browser;
let spa: { server: Server; origin: string };
let foreign: { server: Server; origin: string };
let clientId = '';

beforeAll(async () => {
  // Agora on localhost, the apps on 127.0.0.1: different origins (and different sites).
  const port = await freePort();
  t = await startTestApp({ BASE_URL: `http://localhost:${port}`, PORT: String(port) }, { port });
  browser = await launchChromium();
  spa = await serve(() => spaHtml(t.config.baseUrl, clientId));
  foreign = await serve(() => foreignHtml(t.config.baseUrl));
  const owner = await t
    .get(UsersService)
    .create({ ...USER, username: 'spa-developer', email: 'dev@example.com', name: 'SPA Developer' }, { emailVerified: true });
  await t.get(UsersService).create(USER, { emailVerified: true });
  const { application } = await t
    .get(ApplicationsService)
    .create(owner.id, { name: 'Flight log', redirectUris: [`${spa.origin}/callback`], scopes: ['openid', 'profile', 'api'] }, 'public');
  clientId = application.clientId;
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => spa?.server.close(resolve));
  await new Promise((resolve) => foreign?.server.close(resolve));
  await t?.close();
});

async function newPage(): Promise<Page> {
  return (await browser.newContext({ viewport: { width: 1000, height: 800 } })).newPage();
}

describe('a single-page app on another origin (public client)', () => {
  it('signs the user in with PKCE, exchanges the code with fetch and shows who they are from /graphql', async () => {
    const page = await newPage();
    const corsResponses: string[] = [];
    page.on('response', (res) => {
      if (res.url().startsWith(t.config.baseUrl) && res.headers()['access-control-allow-origin'])
        corsResponses.push(new URL(res.url()).pathname);
    });
    await page.goto(`${spa.origin}/`);
    await page.click('#sign-in');
    await page.waitForURL(/\/sign-in/);
    await page.fill('#login', USER.username);
    await page.fill('#password', USER.password);
    await page.click('button[type=submit]');
    await page.waitForSelector('text=Flight log');
    await page.click('button[value=approve]');
    await page.waitForURL(`${spa.origin}/callback?**`);
    await page.waitForFunction("document.getElementById('viewer').textContent || document.getElementById('error').textContent");
    expect(await page.textContent('#error')).toBe('');
    expect(await page.textContent('#viewer')).toBe(`Signed in as ${USER.name}`);
    // The reads went through CORS (a preflight for /graphql: JSON and Authorization), not around it.
    expect(corsResponses).toEqual(expect.arrayContaining(['/oauth/token', '/graphql']));
    await page.context().close();
  });

  it('refuses a page on an unregistered origin: its fetches to the token endpoint and /graphql reject; discovery, public, it may read', async () => {
    const page = await newPage();
    await page.goto(`${foreign.origin}/`);
    await page.waitForFunction("document.getElementById('results').textContent");
    const results = JSON.parse((await page.textContent('#results'))!) as Record<string, string>;
    // Discovery answers any origin (CORS `*`, as for MCP clients and MCP Inspector): a public document.
    expect(results).toEqual({ token: 'rejected TypeError', graphql: 'rejected TypeError', discovery: 'read 200' });
    await page.context().close();
  });
});
