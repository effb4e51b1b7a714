import fc from 'fast-check';
import { PersonalTokensService } from '../../src/personal-tokens/personal-tokens.service.js';
import { Browser, formFields, signIn } from '../support/browser.js';
import { createUser, TEST_PASSWORD } from '../support/fixtures.js';
import { registerApp } from '../support/oauth.js';
import { startTestApp, TestApp } from '../support/test-app.js';
import type { User } from '../../src/users/user.model.js';
import { encodeComponent, encodePairs, paramsAround, urlEncoding } from './support/encoding.js';
import { ErrorLog, expectPageAnswer, printTally } from './support/expectations.js';
import { Answer, sendRaw } from './support/raw-http.js';
import { fuzzParameters } from './support/settings.js';
import { hostileText, hugeText, mostlyReal, storableText } from './support/text.js';

// Pages never answer bad input with a 5xx: a form comes back with its errors (4xx), an error page, or
// a redirect (303 after a change, to sign-in when signed out). Forms are posted with a valid CSRF
// token and cookie most of the time, so that the fields reach the handlers.

let t: TestApp;
let log: ErrorLog;
let user: User;
let browser: Browser;
let tokenId: string;
let applicationId: string;
const HOUR = 3_600_000;
/** What a browser sends with a navigation or a form post. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

beforeAll(async () => {
  t = await startTestApp();
  log = new ErrorLog(t);
  user = await createUser(t);
  browser = new Browser(t.url);
  await browser.follow(await signIn(browser, user.username, TEST_PASSWORD));
  tokenId = (await t.get(PersonalTokensService).create(user.id, { name: 'fuzz', scopes: ['api'] })).personalToken.id;
  applicationId = (await registerApp(t, user.id)).applicationId;
});
afterAll(async () => {
  printTally();
  await t.close();
});

/** The browser's cookies as one header, and a CSRF token from a page it was just shown. */
async function session(b: Browser, page: string): Promise<{ cookie: string; csrf: string }> {
  const fields = formFields(await (await b.get(page)).text());
  const cookie = ['agora_session', 'agora_csrf', 'agora_flash']
    .map((name) => [name, b.cookie(name)])
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${value}`)
    .join('; ');
  return { cookie, csrf: fields._csrf ?? '' };
}

async function post(path: string, body: string, cookie: string, extra: [string, string][] = []): Promise<Answer> {
  return sendRaw(t.url, {
    method: 'POST',
    target: path,
    headers: [
      ['Content-Type', 'application/x-www-form-urlencoded'],
      ['Origin', t.url],
      ['Cookie', cookie],
      ['Accept', BROWSER_ACCEPT],
      ...extra,
    ],
    body,
  });
}

/** The form's fields with real-looking or hostile values, and the CSRF token right most of the time. */
function formValue(name: string): fc.Arbitrary<string> {
  const plausible: Record<string, fc.Arbitrary<string>> = {
    login: fc.constantFrom(user.username, user.email, 'nobody'),
    password: fc.constantFrom(TEST_PASSWORD, 'wrong-password-123', ''),
    current_password: fc.constantFrom(TEST_PASSWORD, 'wrong'),
    new_password: fc.constantFrom('a-new-long-password-1', 'short'),
    username: fc.stringMatching(/^[a-z][a-z0-9-]{2,20}$/),
    email: fc.stringMatching(/^[a-z]{1,8}@[a-z]{1,8}\.example$/),
    name: fc.constantFrom('Ada', ' ', 'x'.repeat(256)),
    return_to: fc.constantFrom(
      '/',
      '/account',
      '//evil.example',
      'https://evil.example/',
      '/oauth/authorize?client_id=x',
      'javascript:alert(1)',
    ),
    scopes: fc.constantFrom('api', 'read_api', 'openid', 'profile', 'email', 'admin'),
    expires_at: fc.oneof(
      fc
        .date({ min: new Date(-62_135_596_800_000), max: new Date(8_640_000_000_000_000), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10)),
      fc.constantFrom('2031-02-31', '+275760-09-13', '+100000-01-01', '-000001-01-01', '9999-12-31', '2031-01-01T00:00:00Z', '0'),
    ),
    redirect_uris: fc.constantFrom(
      'https://a.example/cb',
      'http://localhost:4000/callback\nhttps://b.example/cb',
      'http://evil',
      'not a url',
      'https://a.example/cb#frag',
    ),
    decision: fc.constantFrom('approve', 'deny'),
  };
  return fc.oneof(
    // Own keys only: a generated field name may be `constructor` or `__proto__`.
    { weight: 2, arbitrary: Object.hasOwn(plausible, name) ? plausible[name]! : storableText },
    { weight: 2, arbitrary: storableText },
    { weight: 1, arbitrary: hostileText },
  );
}

const FORMS: { path: string; page: string; fields: string[]; optional?: string[] }[] = [
  { path: '/account/profile', page: '/account', fields: ['name'] },
  { path: '/account/tokens', page: '/account', fields: ['name', 'scopes', 'expires_at'], optional: ['scopes'] },
  { path: '/account/password', page: '/account/security', fields: ['current_password', 'new_password'] },
  { path: '/account/email', page: '/account/security', fields: ['current_password', 'email'] },
  { path: '/applications', page: '/applications', fields: ['name', 'redirect_uris', 'scopes'], optional: ['scopes'] },
  { path: '/applications/:app', page: '/applications', fields: ['name', 'redirect_uris', 'scopes'], optional: ['scopes'] },
  { path: '/applications/:app/secret', page: '/applications', fields: [] },
  { path: '/account/tokens/:token/revoke', page: '/account', fields: [] },
  { path: '/account/authorized/:app/revoke', page: '/account/authorized', fields: [] },
];

/** A path parameter: the real application or token, a uuid of nothing, or hostile text. */
const pathValue = (real: () => string) =>
  fc
    .oneof(
      { weight: 3, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.uuid() },
      { weight: 1, arbitrary: storableText },
      { weight: 1, arbitrary: hostileText },
    )
    .map((v) => v ?? real());

describe('forms of the signed-in user', () => {
  it('accept any fields, with the CSRF token right most of the time', async () => {
    const form = fc.constantFrom(...FORMS).chain((f) =>
      fc.record({
        form: fc.constant(f),
        pairs: paramsAround(f.fields, formValue, f.optional),
        app: pathValue(() => applicationId),
        token: pathValue(() => tokenId),
        csrf: fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: hostileText }),
        encoding: urlEncoding,
      }),
    );
    await fc.assert(
      fc.asyncProperty(form, async ({ form: f, pairs, app, token, csrf, encoding }) => {
        const { cookie, csrf: real } = await session(browser, f.page);
        const path = f.path.replace(':app', encodeComponent(app, encoding)).replace(':token', encodeComponent(token, encoding));
        const body = encodePairs([['_csrf', csrf ?? real], ...pairs], encoding);
        const request = `POST ${path} ${body.slice(0, 1000)}`;
        log.mark();
        const answer = await post(path, body, cookie);
        expectPageAnswer(request, answer);
        log.expectNone(request);
        if (answer.status === 303 && answer.headers.location?.startsWith('/sign-in')) await signInAgain();
      }),
      fuzzParameters(2),
    );
  });

  it('pages with any path parameters and query strings', async () => {
    const pages = [
      '/',
      '/account',
      '/account/security',
      '/account/authorized',
      '/applications',
      '/explorer',
      '/applications/:app',
      '/applications/:app/delete',
      '/applications/:app/secret',
      '/account/tokens/:token/revoke',
      '/account/authorized/:app/revoke',
      '/account/sessions/sign-out-everywhere',
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...pages),
        pathValue(() => applicationId),
        pathValue(() => tokenId),
        fc.array(fc.tuple(hostileText, hostileText), { maxLength: 3 }),
        urlEncoding,
        fc.constantFrom(BROWSER_ACCEPT, '*/*', 'application/json'),
        async (page, app, token, query, encoding, accept) => {
          const path = page.replace(':app', encodeComponent(app, encoding)).replace(':token', encodeComponent(token, encoding));
          const target = query.length ? `${path}?${encodePairs(query, encoding)}` : path;
          const { cookie } = await session(browser, '/account');
          const request = `GET ${target}`;
          log.mark();
          const answer = await sendRaw(t.url, {
            method: 'GET',
            target,
            headers: [
              ['Cookie', cookie],
              ['Accept', accept],
            ],
          });
          expectPageAnswer(request, answer, { browser: accept === BROWSER_ACCEPT });
          log.expectNone(request);
        },
      ),
      fuzzParameters(),
    );
  });

  it('bodies over and under the 1 MB limit', async () => {
    await fc.assert(
      fc.asyncProperty(hugeText, fc.constantFrom('/account/profile', '/applications'), async (text, path) => {
        const { cookie, csrf } = await session(browser, '/account');
        const body = `_csrf=${encodeURIComponent(csrf)}&name=${encodeComponent(text, 'standard')}`;
        const request = `POST ${path} (${body.length} bytes)`;
        log.mark();
        expectPageAnswer(request, await post(path, body, cookie));
        log.expectNone(request);
      }),
      fuzzParameters(0.05),
    );
  });
});

async function signInAgain(): Promise<void> {
  browser = new Browser(t.url);
  await browser.follow(await signIn(browser, user.username, TEST_PASSWORD));
}

describe('sign-in and sign-up', () => {
  it.each([
    ['/sign-in', ['login', 'password', 'return_to']],
    ['/sign-up', ['name', 'username', 'email', 'password', 'return_to']],
  ])('POST %s with any fields', async (path, fields) => {
    await fc.assert(
      fc.asyncProperty(
        paramsAround(fields, formValue),
        fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: hostileText }),
        urlEncoding,
        async (pairs, csrf, encoding) => {
          const visitor = new Browser(t.url);
          const { cookie, csrf: real } = await session(visitor, path);
          const body = encodePairs([['_csrf', csrf ?? real], ...pairs], encoding);
          const request = `POST ${path} ${body.slice(0, 1000)}`;
          log.mark();
          const answer = await post(path, body, cookie);
          expectPageAnswer(request, answer);
          log.expectNone(request);
          // The throttles (per address) would answer every later attempt 429: let their window pass.
          if (answer.status === 429) t.clock.advance(HOUR + 60_000);
        },
      ),
      fuzzParameters(path === '/sign-in' ? 1 : 0.5),
    );
  });

  it('GET /sign-in and /sign-up with any return_to and query', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/sign-in', '/sign-up'),
        paramsAround(['return_to'], (name) => mostlyReal(formValue(name)), ['reauth']),
        urlEncoding,
        fc.boolean(),
        async (path, pairs, encoding, signedIn) => {
          const target = `${path}?${encodePairs(pairs, encoding)}`;
          const { cookie } = signedIn ? await session(browser, '/account') : { cookie: '' };
          const request = `GET ${target}${signedIn ? ' (signed in)' : ''}`;
          log.mark();
          const headers: [string, string][] = [['Accept', BROWSER_ACCEPT]];
          if (cookie) headers.push(['Cookie', cookie]);
          expectPageAnswer(request, await sendRaw(t.url, { method: 'GET', target, headers }));
          log.expectNone(request);
        },
      ),
      fuzzParameters(),
    );
  });

  it('a signed-in user signing out and everywhere, with any fields', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/sign-out', '/account/sessions/sign-out-everywhere'),
        paramsAround([], formValue),
        urlEncoding,
        async (path, pairs, encoding) => {
          const { cookie, csrf } = await session(browser, '/account');
          const body = encodePairs([['_csrf', csrf], ...pairs], encoding);
          const request = `POST ${path} ${body.slice(0, 1000)}`;
          log.mark();
          expectPageAnswer(request, await post(path, body, cookie));
          log.expectNone(request);
          await signInAgain();
        },
      ),
      fuzzParameters(0.1),
    );
  });
});
