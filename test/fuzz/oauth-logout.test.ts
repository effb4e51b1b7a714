import fc from 'fast-check';
import jwt from 'jsonwebtoken';
import { ApplicationsService } from '../../src/oauth/clients/applications.service.js';
import { SigningKeysService } from '../../src/oauth/keys/signing-keys.service.js';
import { Browser, formFields, signIn } from '../support/browser.js';
import { createUser, TEST_PASSWORD } from '../support/fixtures.js';
import { REDIRECT_URI } from '../support/oauth.js';
import { startTestApp, TestApp } from '../support/test-app.js';
import { encodePairs, paramsAround, urlEncoding } from './support/encoding.js';
import { ErrorLog, expectPageAnswer, printTally } from './support/expectations.js';
import { Answer, sendRaw } from './support/raw-http.js';
import { fuzzParameters } from './support/settings.js';
import { base64urlOfJunk, hostileText, mostlyReal } from './support/text.js';

// /oauth/logout (GET, the relying party's form POST) and the confirmation form never answer bad input
// with a 5xx: a page (confirmation, signed out, or the 400 error page), or a redirect to the registered
// post-logout redirect URI or to the endpoint itself. The browser is signed in as someone other than the
// hint's user, so no request here ends its session.

const LOGOUT_URI = 'http://localhost:4000/signed-out';

let t: TestApp;
let log: ErrorLog;
let browser: Browser;
let clientId: string;
let hint: string;
beforeAll(async () => {
  t = await startTestApp();
  log = new ErrorLog(t);
  const owner = await createUser(t);
  const { application } = await t.get(ApplicationsService).create(owner.id, {
    name: 'Fuzzed Client',
    redirectUris: [REDIRECT_URI],
    scopes: ['openid'],
    postLogoutRedirectUris: [LOGOUT_URI],
  });
  clientId = application.clientId;
  const { kid, privateKey } = await t.get(SigningKeysService).activeKey();
  const now = Math.floor(Date.now() / 1000);
  hint = jwt.sign({ iss: t.url, sub: owner.id, aud: clientId, iat: now, exp: now + 3600 }, privateKey, { algorithm: 'RS256', keyid: kid });
  browser = new Browser(t.url);
  await browser.follow(await signIn(browser, (await createUser(t)).username, TEST_PASSWORD));
});
afterAll(async () => {
  printTally();
  await t.close();
});

function logoutValue(name: string): fc.Arbitrary<string> {
  const real: Record<string, fc.Arbitrary<string>> = {
    id_token_hint: fc.oneof(
      fc.constant(hint),
      base64urlOfJunk.map((junk) => `${hint.split('.')[0]}.${junk}.${hint.split('.')[2]}`),
    ),
    client_id: fc.constant(clientId),
    post_logout_redirect_uri: fc.constantFrom(LOGOUT_URI, REDIRECT_URI, `${LOGOUT_URI}/x`),
  };
  return mostlyReal(Object.hasOwn(real, name) ? real[name]! : hostileText, 3);
}

const logoutParams = (): fc.Arbitrary<[string, string][]> =>
  paramsAround(['id_token_hint', 'client_id', 'post_logout_redirect_uri'], logoutValue, ['state', 'ui_locales', 'logout_hint', '_csrf']);

function send(target: string, method: 'GET' | 'POST', cookie: string | undefined, body?: string): Promise<Answer> {
  const headers: [string, string][] = [['Accept', 'text/html,application/xhtml+xml,*/*;q=0.8']];
  if (cookie) headers.push(['Cookie', cookie]);
  if (body !== undefined) headers.push(['Content-Type', 'application/x-www-form-urlencoded'], ['Origin', t.url]);
  return sendRaw(t.url, { method, target, headers, body });
}

function cookies(): string {
  return ['agora_session', 'agora_csrf']
    .map((name) => [name, browser.cookie(name)])
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${value}`)
    .join('; ');
}

/** The only places logout may send a browser: the registered URI, or this endpoint (the signed-out page). */
function expectLogoutRedirect(request: string, answer: Answer): void {
  if (answer.status !== 302 && answer.status !== 303) return;
  const location = new URL(answer.headers.location!, t.url);
  const target = `${location.origin}${location.pathname}`;
  if (target !== LOGOUT_URI && target !== `${t.url}/oauth/logout` && target !== `${t.url}/sign-in`)
    throw new Error(`logout redirected to ${location}\n  request: ${request}`);
}

describe('end-session endpoint', () => {
  it.each(['GET', 'POST'] as const)('%s /oauth/logout with any parameters, signed out and signed in', async (method) => {
    await fc.assert(
      fc.asyncProperty(logoutParams(), urlEncoding, fc.boolean(), async (pairs, encoding, signedIn) => {
        const encoded = encodePairs(pairs, encoding);
        const target = method === 'GET' ? `/oauth/logout?${encoded}` : '/oauth/logout';
        const request = `${method} /oauth/logout ${encoded}${signedIn ? ' (signed in)' : ''}`;
        log.mark();
        const answer = await send(target, method, signedIn ? cookies() : undefined, method === 'POST' ? encoded : undefined);
        expectPageAnswer(request, answer);
        expectLogoutRedirect(request, answer);
        log.expectNone(request);
      }),
      fuzzParameters(),
    );
  });

  it('POST /oauth/logout/confirm with any fields', async () => {
    const page = await (await browser.get(`/oauth/logout?client_id=${clientId}`)).text();
    const csrf = formFields(page)._csrf!;
    await fc.assert(
      fc.asyncProperty(logoutParams(), urlEncoding, async (pairs, encoding) => {
        // Without the CSRF token (403) the session stays; with it, confirming would end it, so the token is left out or junk.
        const body = encodePairs([['_csrf', `${csrf}x`], ...pairs], encoding);
        const request = `POST /oauth/logout/confirm ${body}`;
        log.mark();
        const answer = await send('/oauth/logout/confirm', 'POST', cookies(), body);
        expectPageAnswer(request, answer);
        expectLogoutRedirect(request, answer);
        log.expectNone(request);
      }),
      fuzzParameters(),
    );
    expect((await browser.get('/account')).status).toBe(200);
  });
});
