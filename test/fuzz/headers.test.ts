import fc from 'fast-check';
import { Browser, signIn } from '../support/browser.js';
import { createUser, TEST_PASSWORD } from '../support/fixtures.js';
import { startTestApp, TestApp } from '../support/test-app.js';
import {
  ErrorLog,
  expectGraphqlAnswer,
  expectNoServerError,
  expectOAuthClientAnswer,
  expectPageAnswer,
  expectRestAnswer,
  expectUserinfoAnswer,
  printTally,
} from './support/expectations.js';
import { Answer, sendRaw } from './support/raw-http.js';
import { fuzzParameters } from './support/settings.js';
import { hostileText } from './support/text.js';
import { buildWorld, World } from './support/world.js';

// Headers are input too: Authorization, Private-Token, Cookie, Content-Type, Accept, Origin,
// X-Request-Id and friends, with junk bytes in them, never get a 5xx from any surface, and each
// surface keeps its error shape.

let t: TestApp;
let world: World;
let log: ErrorLog;
let session: string;
beforeAll(async () => {
  t = await startTestApp();
  world = await buildWorld(t);
  log = new ErrorLog(t);
  const user = await createUser(t);
  const browser = new Browser(t.url);
  await browser.follow(await signIn(browser, user.username, TEST_PASSWORD));
  session = `agora_session=${browser.cookie('agora_session')}; agora_csrf=${browser.cookie('agora_csrf')}`;
});
afterAll(async () => {
  printTally();
  await t.close();
});

const NAMES = [
  'Authorization',
  'Private-Token',
  'Cookie',
  'Content-Type',
  'Accept',
  'Origin',
  'X-Request-Id',
  'X-CSRF-Token',
  'Sec-Fetch-Site',
  'X-Forwarded-For',
  'X-Forwarded-Proto',
  'Accept-Encoding',
  'Accept-Language',
  'If-None-Match',
  'If-Modified-Since',
  'Content-Encoding',
  'Referer',
  'User-Agent',
  'Range',
];

/** Values around what each header should hold: a scheme, a cookie name, a media type, with junk after. */
const prefixes: Record<string, string[]> = {
  Authorization: ['Bearer ', 'Basic ', 'bearer ', 'Bearer agora_pat_', 'Bearer agora_oat_', ''],
  'Private-Token': ['agora_pat_', 'agora_oat_', ''],
  Cookie: ['agora_session=', 'agora_csrf=', 'agora_flash=', '__Host-agora_session=', 'a=b; agora_session=', ''],
  'Content-Type': ['application/json; charset=', 'application/x-www-form-urlencoded; ', 'multipart/form-data; boundary=', ''],
  Accept: ['text/html;q=', 'application/graphql-response+json, ', '*/*;q=', ''],
  Origin: ['http://', 'https://', 'null', ''],
  'X-Request-Id': ['', 'req-'],
  'If-None-Match': ['W/"', '"'],
  'Content-Encoding': ['gzip', 'br', 'deflate, ', ''],
  Range: ['bytes=', ''],
};

/** Bytes the HTTP parser lets through in a header value: visible ASCII, tab, space and obs-text (0x80–0xFF). */
const parsable = (bytes: Buffer) => Buffer.from(bytes.filter((b) => b === 9 || (b >= 32 && b !== 127)));

/**
 * A header value as bytes: mostly what the HTTP parser accepts (UTF-8 or Latin-1 text, raw high
 * bytes), so that it reaches the application; sometimes control bytes, a bare CR or LF, or a size
 * over the 16 KB limit, which the parser refuses itself.
 */
const value = fc.oneof(
  { weight: 6, arbitrary: hostileText.map((text) => parsable(Buffer.from(text, 'utf8'))) },
  { weight: 2, arbitrary: hostileText.map((text) => parsable(Buffer.from(text, 'latin1'))) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 60 }).map((bytes) => parsable(Buffer.from(bytes))) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 20 }).map((bytes) => Buffer.from(bytes.filter((b) => b !== 10 && b !== 13))) },
  { weight: 1, arbitrary: fc.constantFrom('a\rb', 'a\nb', '\r\n X-Injected: 1', 'a\u0000b').map((text) => Buffer.from(text)) },
  { weight: 1, arbitrary: fc.constantFrom(4_000, 8_000, 17_000).map((n) => Buffer.from('a'.repeat(n))) },
);

const header = fc
  .tuple(
    fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...NAMES) },
      { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/) },
    ),
    value,
  )
  .chain(([name, bytes]) =>
    fc
      .constantFrom(...(Object.hasOwn(prefixes, name) ? prefixes[name]! : ['']))
      .map((prefix): [string, Buffer] => [name, Buffer.concat([Buffer.from(prefix), bytes])]),
  );

const headers = fc.array(header, { minLength: 1, maxLength: 4 });

interface Surface {
  name: string;
  method: string;
  target: string;
  /** Headers the surface needs to get past its first check (its credentials, its media type). */
  base: () => [string, string][];
  body?: string;
  expect: (request: string, answer: Answer) => void;
}

const SURFACES: Surface[] = [
  {
    name: 'GraphQL anonymous',
    method: 'POST',
    target: '/graphql',
    base: () => [['Content-Type', 'application/json']],
    body: JSON.stringify({ query: '{ events(first: 2) { nodes { id } } }' }),
    expect: expectGraphqlAnswer,
  },
  {
    name: 'GraphQL authenticated',
    method: 'POST',
    target: '/graphql',
    base: () => [
      ['Content-Type', 'application/json'],
      ['Private-Token', world.token],
    ],
    body: JSON.stringify({ query: '{ viewer { id registrations(first: 1) { nodes { id } } } }' }),
    expect: expectGraphqlAnswer,
  },
  {
    name: 'GraphQL with the session (the explorer)',
    method: 'POST',
    target: '/graphql',
    base: () => [
      ['Content-Type', 'application/json'],
      ['Cookie', session],
      ['X-CSRF-Token', 'x'],
    ],
    body: JSON.stringify({ query: '{ viewer { id } }' }),
    expect: expectGraphqlAnswer,
  },
  { name: 'GraphQL GET', method: 'GET', target: '/graphql?query=%7B__typename%7D', base: () => [], expect: expectGraphqlAnswer },
  { name: 'REST public', method: 'GET', target: '/api/events?per_page=2', base: () => [], expect: expectRestAnswer },
  { name: 'REST token', method: 'GET', target: '/api/user', base: () => [['Private-Token', world.token]], expect: expectRestAnswer },
  {
    name: 'REST write',
    method: 'POST',
    target: '/api/organizers',
    base: () => [
      ['Private-Token', world.token],
      ['Content-Type', 'application/json'],
    ],
    body: JSON.stringify({ slug: 'x', name: 'X' }),
    expect: expectRestAnswer,
  },
  {
    name: 'OAuth token',
    method: 'POST',
    target: '/oauth/token',
    base: () => [['Content-Type', 'application/x-www-form-urlencoded']],
    body: 'grant_type=authorization_code&code=x&redirect_uri=x',
    expect: expectOAuthClientAnswer,
  },
  { name: 'OAuth userinfo', method: 'GET', target: '/oauth/userinfo', base: () => [], expect: expectUserinfoAnswer },
  {
    name: 'page',
    method: 'GET',
    target: '/account',
    base: () => [
      ['Cookie', session],
      ['Accept', 'text/html'],
    ],
    expect: expectPageAnswer,
  },
  {
    name: 'form',
    method: 'POST',
    target: '/account/profile',
    base: () => [
      ['Cookie', session],
      ['Content-Type', 'application/x-www-form-urlencoded'],
      ['Origin', t.url],
      ['Accept', 'text/html'],
    ],
    body: '_csrf=x&name=Ada',
    expect: expectPageAnswer,
  },
  {
    name: 'sign-in',
    method: 'POST',
    target: '/sign-in',
    base: () => [
      ['Content-Type', 'application/x-www-form-urlencoded'],
      ['Accept', 'text/html'],
    ],
    body: 'login=a&password=b',
    expect: expectPageAnswer,
  },
  { name: 'health', method: 'GET', target: '/readyz', base: () => [], expect: (r, a) => expectNoServerError('health', r, a) },
  { name: 'JWKS', method: 'GET', target: '/oauth/discovery/keys', base: () => [], expect: (r, a) => expectNoServerError('JWKS', r, a) },
  { name: 'asset', method: 'GET', target: '/assets/explorer.js', base: () => [], expect: (r, a) => expectNoServerError('asset', r, a) },
];

describe('junk in headers', () => {
  it.each(SURFACES.map((s) => [s.name, s] as const))('%s', async (_name, surface) => {
    await fc.assert(
      fc.asyncProperty(headers, fc.boolean(), async (junk, replace) => {
        // The junk replaces the surface's own header of that name, or comes in addition to it (twice).
        const names = new Set(junk.map(([name]) => name.toLowerCase()));
        const base = replace ? surface.base().filter(([name]) => !names.has(name.toLowerCase())) : surface.base();
        const all: [string, string | Buffer][] = [...base, ...junk];
        const request = `${surface.method} ${surface.target} ${JSON.stringify(all.map(([n, v]) => [n, (Buffer.isBuffer(v) ? v.toString('latin1') : v).slice(0, 300)]))}`;
        log.mark();
        surface.expect(request, await sendRaw(t.url, { method: surface.method, target: surface.target, headers: all, body: surface.body }));
        log.expectNone(request);
      }),
      fuzzParameters(0.5),
    );
  });
});

/**
 * Requests the HTTP parser refuses, or that Fastify answers before any route (an unknown method, a
 * target with a space or a control byte, a malformed header line, a Content-Length that is not a number
 * or comes with Transfer-Encoding, an Expect, no Host): never a 5xx, always the security headers and a
 * request id, and the body in the shape of the transport the target names.
 */
describe('requests refused before routing', () => {
  const TARGETS: [string, (request: string, answer: Answer) => void][] = [
    ['/graphql', expectGraphqlAnswer],
    ['/oauth/token', expectOAuthClientAnswer],
    ['/api/events', expectRestAnswer],
    ['/sign-in', (request, answer) => expectPageAnswer(request, answer, { browser: false })],
  ];
  const method = fc.oneof(
    fc.constantFrom('GET', 'POST', 'FOO', 'get', 'PROPFIND', 'TRACE', 'OPTIONS', 'G\u0000T', 'POST\t', 'BREW', ''),
    fc.stringMatching(/^[A-Z]{1,12}$/),
  );
  const suffix = fc.constantFrom('', '?x=1', ' x', '\t', '\u0001', '#f', '?%zz', '?x=%00', '?q=\u00ff', '\u0000');
  const framing = fc.subarray(
    [
      ['Content-Length', 'abc'],
      ['Content-Length', '-1'],
      ['Content-Length', '1, 2'],
      ['Transfer-Encoding', 'gzip'],
      ['Expect', 'teapot'],
      ['Accept', 'text/html'],
      ['X Bad', 'x'],
      ['X-Folded', 'a\r\n b'],
      ['Host', ''],
    ] as [string, string][],
    { maxLength: 3 },
  );

  it.each(TARGETS.map(([path, expect]) => [path, expect] as const))('%s', async (path, expectAnswer) => {
    await fc.assert(
      fc.asyncProperty(method, suffix, framing, async (verb, tail, extra) => {
        const target = `${path}${tail}`;
        const request = `${verb} ${target} ${JSON.stringify(extra)}`;
        log.mark();
        const answer = await sendRaw(t.url, { method: verb, target, headers: extra, body: verb === 'POST' ? 'x' : undefined });
        // An address that answers other methods says so in the one 405 shape (Allow), whatever its transport.
        if (answer.status === 404 || answer.status === 405) expectRestAnswer(request, answer);
        else expectAnswer(request, answer);
        log.expectNone(request);
      }),
      fuzzParameters(0.5),
    );
  });
});
