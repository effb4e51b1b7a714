import fc from 'fast-check';
import { Browser, signIn } from '../support/browser.js';
import { createUser, TEST_PASSWORD } from '../support/fixtures.js';
import { REDIRECT_URI } from '../support/oauth.js';
import { startTestApp, TestApp } from '../support/test-app.js';
import { encodePairs, paramsAround, urlEncoding } from './support/encoding.js';
import { ErrorLog, expectPageAnswer, printTally } from './support/expectations.js';
import { Answer, sendRaw } from './support/raw-http.js';
import { fuzzParameters } from './support/settings.js';
import { hostileText, mostlyReal } from './support/text.js';
import { buildWorld, World } from './support/world.js';

// GET /oauth/authorize and the consent form never answer bad input with a 5xx: an HTML page (consent,
// or the error page for a request that cannot go back to the client), a redirect to sign in, or a
// redirect to the registered redirect URI with `code` or `error` and `iss`.

let t: TestApp;
let world: World;
let log: ErrorLog;
let browser: Browser;
beforeAll(async () => {
  t = await startTestApp();
  world = await buildWorld(t);
  log = new ErrorLog(t);
  const user = await createUser(t);
  browser = new Browser(t.url);
  await browser.follow(await signIn(browser, user.username, TEST_PASSWORD));
});
afterAll(async () => {
  printTally();
  await t.close();
});

async function send(path: string, headers: [string, string | Buffer][], body: string | undefined, method = 'POST'): Promise<Answer> {
  return sendRaw(t.url, { method, target: path, headers, body });
}

function authorizeValue(name: string): fc.Arbitrary<string> {
  const real: Record<string, fc.Arbitrary<string>> = {
    client_id: fc.constant(world.app.clientId),
    redirect_uri: fc.constant(REDIRECT_URI),
    response_type: fc.constantFrom('code', 'token', 'code id_token', 'none'),
    scope: fc.subarray(['openid', 'profile', 'email', 'api', 'read_api', 'admin', 'offline_access']).map((s) => s.join(' ')),
    code_challenge: fc.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    code_challenge_method: fc.constantFrom('S256', 'plain', 's256'),
    prompt: fc.subarray(['none', 'login', 'consent', 'select_account', 'create']).map((s) => s.join(' ')),
    max_age: fc.oneof(fc.nat().map(String), fc.constantFrom('0', '9999999999', '99999999999', '-1', '1.5', '1e3')),
  };
  return mostlyReal(Object.hasOwn(real, name) ? real[name]! : hostileText, name === 'client_id' || name === 'redirect_uri' ? 8 : 3);
}

/** Authorization requests: mostly complete and about the real client, with hostile values, repeats and strays. */
const authorizeParams = (): fc.Arbitrary<[string, string][]> =>
  paramsAround(['client_id', 'redirect_uri', 'response_type', 'scope', 'code_challenge', 'code_challenge_method'], authorizeValue, [
    'state',
    'nonce',
    'prompt',
    'max_age',
    'response_mode',
    'request',
    'request_uri',
    'login_hint',
    'reauth',
  ]);

describe('authorization endpoint', () => {
  it('GET /oauth/authorize with any parameters, signed out and signed in', async () => {
    await fc.assert(
      fc.asyncProperty(authorizeParams(), urlEncoding, fc.boolean(), async (pairs, encoding, signedIn) => {
        const target = `/oauth/authorize?${encodePairs(pairs, encoding)}`;
        const cookie = signedIn ? browserCookies() : undefined;
        const request = `GET ${target}${signedIn ? ' (signed in)' : ''}`;
        log.mark();
        const headers: [string, string][] = [['Accept', 'text/html,application/xhtml+xml,*/*;q=0.8']];
        if (cookie) headers.push(['Cookie', cookie]);
        const answer = await send(target, headers, undefined, 'GET');
        expectPageAnswer(request, answer);
        expectAuthorizeRedirect(request, answer);
        log.expectNone(request);
      }),
      fuzzParameters(2),
    );
  });

  it('POST /oauth/authorize (the consent form) with any fields', async () => {
    const csrf = await consentCsrf();
    await fc.assert(
      fc.asyncProperty(
        authorizeParams(),
        fc.option(fc.constantFrom('approve', 'deny'), { freq: 4 }),
        fc.oneof({ weight: 5, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: hostileText }),
        urlEncoding,
        async (pairs, decision, csrfJunk, encoding) => {
          const fields: [string, string][] = [['_csrf', csrfJunk ?? csrf], ...pairs];
          if (decision) fields.push(['decision', decision]);
          const body = encodePairs(fields, encoding);
          const request = `POST /oauth/authorize ${body}`;
          log.mark();
          const answer = await send(
            '/oauth/authorize',
            [
              ['Content-Type', 'application/x-www-form-urlencoded'],
              ['Origin', t.url],
              ['Cookie', browserCookies()],
              ['Accept', 'text/html,application/xhtml+xml,*/*;q=0.8'],
            ],
            body,
          );
          expectPageAnswer(request, answer);
          expectAuthorizeRedirect(request, answer);
          log.expectNone(request);
        },
      ),
      fuzzParameters(),
    );
  });
});

function browserCookies(): string {
  return ['agora_session', 'agora_csrf', '__Host-agora_session', '__Host-agora_csrf']
    .map((name) => [name, browser.cookie(name)])
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${value}`)
    .join('; ');
}

async function consentCsrf(): Promise<string> {
  const page = await (await browser.get('/account')).text();
  const match = /name="_csrf" value="([^"]+)"/.exec(page);
  if (!match) throw new Error('no CSRF token on /account');
  return match[1]!;
}

/** A redirect to the client carries a code or an error, with the issuer (RFC 9207); to the site, only sign-in. */
function expectAuthorizeRedirect(request: string, answer: Answer): void {
  if (answer.status !== 302 && answer.status !== 303) return;
  const location = new URL(answer.headers.location!, t.url);
  if (location.origin === t.url) {
    if (!['/sign-in', '/'].includes(location.pathname))
      throw new Error(`authorize redirected within the site to ${location}\n  request: ${request}`);
    return;
  }
  const params = location.searchParams;
  if (`${location.origin}${location.pathname}` !== REDIRECT_URI)
    throw new Error(`authorize redirected to an unregistered URI ${location}\n  request: ${request}`);
  if (!params.get('code') === !params.get('error'))
    throw new Error(`a redirect to the client needs code or error: ${location}\n  request: ${request}`);
  if (params.get('iss') !== t.url) throw new Error(`a redirect to the client needs iss: ${location}\n  request: ${request}`);
}
