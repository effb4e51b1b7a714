import { UsersService } from '../src/users/users.service.js';
import type { User } from '../src/users/user.model.js';
import { Browser, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { ApiResponse, graphql, GraphqlBody } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';

const VIEWER = '{ viewer { id name } }';
const UNAUTHORIZED = JSON.stringify({ message: '401 Unauthorized' });

let t: TestApp;
let user: User;
let browser: Browser;
let csrfToken: string;

/** The CSRF token the explorer page embeds for its calls to /graphql. */
async function explorerToken(signedIn: Browser): Promise<string> {
  const res = await signedIn.get('/explorer');
  expect(res.status).toBe(200);
  const token = /<meta name="csrf-token" content="([^"]+)"/.exec(await res.text())?.[1];
  expect(token).toBeDefined();
  return token!;
}

/** The browser's cookies (session and CSRF secret), as the explorer page's fetch sends them. */
function cookies(signedIn: Browser): string {
  return `agora_session=${signedIn.cookie('agora_session')}; agora_csrf=${signedIn.cookie('agora_csrf')}`;
}

/** A call to /graphql as the explorer makes it, with any of its parts changed or left out. */
function explorerCall(
  query: string,
  o: {
    cookie?: string | null;
    token?: string | null;
    /** Origin and Sec-Fetch-Site as a browser sends them on a same-origin fetch (the default). */
    browser?: boolean;
    headers?: Record<string, string>;
    variables?: Record<string, unknown>;
  } = {},
): Promise<ApiResponse<GraphqlBody>> {
  const headers: Record<string, string> = {
    ...(o.browser === false ? {} : { origin: t.url, 'sec-fetch-site': 'same-origin' }),
    ...o.headers,
  };
  const cookie = o.cookie === undefined ? cookies(browser) : o.cookie;
  const token = o.token === undefined ? csrfToken : o.token;
  if (cookie !== null) headers.cookie = cookie;
  if (token !== null) headers['x-csrf-token'] = token;
  return graphql(t.url, query, { headers, variables: o.variables });
}

function expect401(res: ApiResponse<GraphqlBody>): void {
  expect(res.status).toBe(401);
  expect(res.text).toBe(UNAUTHORIZED);
}

beforeAll(async () => {
  t = await startTestApp();
  user = await createUser(t, { name: 'Grace Explorer' });
  browser = new Browser(t.url);
  await signIn(browser, user.username, TEST_PASSWORD);
  csrfToken = await explorerToken(browser);
});
afterAll(() => t.close());

describe('the API explorer running as the signed-in user', () => {
  it('answers the session cookie with the page’s CSRF token as the user', async () => {
    const res = await explorerCall(VIEWER);
    expect(res.status).toBe(200);
    expect(res.body.data?.viewer).toEqual({ id: expect.any(String), name: 'Grace Explorer' });
  });

  it('answers the session’s calls with Cache-Control: private, no-store (they carry the user’s data)', async () => {
    const res = await explorerCall(VIEWER);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
  });

  it('works without Origin and Sec-Fetch-Site too (clients that send neither are held to the token)', async () => {
    const res = await explorerCall(VIEWER, { browser: false });
    expect(res.body.data?.viewer.name).toBe('Grace Explorer');
  });

  it('runs mutations: the session has the user’s full api scope', async () => {
    const res = await explorerCall('mutation($input: UpdateViewerProfileInput!) { updateViewerProfile(input: $input) { user { name } } }', {
      variables: { input: { name: 'Grace Renamed' } },
    });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data?.updateViewerProfile.user.name).toBe('Grace Renamed');
    expect((await explorerCall(VIEWER)).body.data?.viewer.name).toBe('Grace Renamed');
  });

  it('ignores a session cookie without the X-CSRF-Token header: anonymous, as before', async () => {
    expect401(await explorerCall(VIEWER, { token: null }));
    // Public fields still answer anonymously.
    const anonymous = await explorerCall('{ user(username: "nobody-here") { id } }', { token: null });
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.data?.user).toBeNull();
  });

  it('refuses a token issued for another session', async () => {
    const other = new Browser(t.url);
    const otherUser = await createUser(t, { name: 'Someone Else' });
    await signIn(other, otherUser.username, TEST_PASSWORD);
    const otherToken = await explorerToken(other);
    expect401(await explorerCall(VIEWER, { token: otherToken }));
    // …and this session's token with the other browser's cookies.
    expect401(await explorerCall(VIEWER, { cookie: cookies(other) }));
  });

  it.each([
    ['another origin', { origin: 'https://evil.example' }],
    ['Origin: null (a sandboxed frame, a data: page)', { origin: 'null' }],
    ['a cross-site page that leaves Origin out', { 'sec-fetch-site': 'cross-site' }],
  ])('refuses a request from %s, even with a valid token', async (_, headers) => {
    expect401(await explorerCall(VIEWER, { browser: false, headers }));
  });

  it('refuses the header without a session cookie, or with a forged or missing token', async () => {
    expect401(await explorerCall(VIEWER, { cookie: null }));
    expect401(await explorerCall(VIEWER, { cookie: `agora_csrf=${browser.cookie('agora_csrf')}` }));
    expect401(await explorerCall(VIEWER, { token: '' }));
    expect401(await explorerCall(VIEWER, { token: `${csrfToken.slice(0, -2)}xx` }));
    // The token needs the browser's CSRF cookie beside it.
    expect401(await explorerCall(VIEWER, { cookie: `agora_session=${browser.cookie('agora_session')}` }));
  });

  it('refuses the session of a blocked user, and of a signed-out one', async () => {
    const blockedBrowser = new Browser(t.url);
    const blocked = await createUser(t, { name: 'Blocked Later' });
    await signIn(blockedBrowser, blocked.username, TEST_PASSWORD);
    const token = await explorerToken(blockedBrowser);
    expect((await explorerCall(VIEWER, { cookie: cookies(blockedBrowser), token })).status).toBe(200);
    await t.get(UsersService).setState(blocked.username, 'blocked');
    expect401(await explorerCall(VIEWER, { cookie: cookies(blockedBrowser), token }));

    const leaving = new Browser(t.url);
    const leaver = await createUser(t);
    await signIn(leaving, leaver.username, TEST_PASSWORD);
    const leavingToken = await explorerToken(leaving);
    const leavingCookies = cookies(leaving);
    const signOut = await leaving.post('/sign-out', { _csrf: leavingToken });
    expect(signOut.status).toBe(303);
    expect401(await explorerCall(VIEWER, { cookie: leavingCookies, token: leavingToken }));
  });

  it('lets an explicit token take precedence over the session', async () => {
    const res = await explorerCall(VIEWER, { headers: { 'private-token': 'agora_pat_not-a-real-token' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/invalid_token/);
  });

  it('accepts the session on POST /graphql only: REST endpoints and GET /graphql ignore it', async () => {
    const headers = { origin: t.url, cookie: cookies(browser), 'x-csrf-token': csrfToken };
    const userinfo = await fetch(`${t.url}/oauth/userinfo`, { headers });
    expect(userinfo.status).toBe(401);
    const get = await fetch(`${t.url}/graphql?query=${encodeURIComponent(VIEWER)}`, {
      headers: { ...headers, accept: 'application/json' },
    });
    expect(get.status).toBe(401);
  });
});

describe('the explorer page', () => {
  it('is GraphiQL from our own files, under a strict CSP with a per-response style nonce', async () => {
    const res = await browser.get('/explorer');
    const page = await res.text();
    const csp = res.headers.get('content-security-policy')!;
    const nonce = /<meta name="style-nonce" content="([^"]+)"/.exec(page)?.[1];
    expect(nonce).toBeDefined();
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain(`style-src 'self' 'nonce-${nonce}';`);
    expect(csp).toContain("font-src 'self' data:;");
    expect(csp).toContain("connect-src 'self';");
    expect(csp).not.toContain('unsafe');
    expect(page).not.toContain('id="token"');

    const assets = [...page.matchAll(/(?:src|href)="(\/assets\/vendor\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toEqual([
      expect.stringMatching(/^\/assets\/vendor\/graphiql-3\.\d+\.\d+\.css$/),
      expect.stringMatching(/^\/assets\/vendor\/react-18\.\d+\.\d+\.js$/),
      expect.stringMatching(/^\/assets\/vendor\/react-dom-18\.\d+\.\d+\.js$/),
      expect.stringMatching(/^\/assets\/vendor\/graphiql-3\.\d+\.\d+\.js$/),
    ]);
    for (const asset of assets) {
      const file = await fetch(`${t.url}${asset}`);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toBe(asset.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8');
      expect(file.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    }
    // Other pages keep the strict policy.
    const account = await browser.get('/account');
    expect(account.headers.get('content-security-policy')).toContain("style-src 'self';");
  });

  it.each(['graphiql.min.js', 'react-18.3.1.jsx', '..%2Fpackage.json', '..%2F..%2Fpackage.json', 'graphiql-3.9.0.js.map'])(
    'serves only allow-listed vendor files: not %s',
    async (name) => {
      expect((await fetch(`${t.url}/assets/vendor/${name}`)).status).toBe(404);
    },
  );
});
