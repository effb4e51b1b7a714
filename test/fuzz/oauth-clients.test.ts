import fc from 'fast-check';
import { createHash, randomBytes } from 'node:crypto';
import { ApplicationsService } from '../../src/oauth/clients/applications.service.js';
import { AuthorizationCodesService } from '../../src/oauth/authorize/authorization-codes.service.js';
import { createUser } from '../support/fixtures.js';
import { REDIRECT_URI } from '../support/oauth.js';
import { startTestApp, TestApp } from '../support/test-app.js';
import type { User } from '../../src/users/user.model.js';
import { encodePairs, junk, paramsAround, toJson, urlEncoding } from './support/encoding.js';
import { ErrorLog, expectOAuthClientAnswer, expectUserinfoAnswer, printTally } from './support/expectations.js';
import { Answer, sendRaw } from './support/raw-http.js';
import { fuzzParameters } from './support/settings.js';
import { hostileText, hugeText, mostlyReal } from './support/text.js';
import { buildWorld, World } from './support/world.js';

// The endpoints OAuth clients call never answer bad input with a 5xx: token, revoke and introspect
// answer RFC 6749 §5.2 JSON (400/401, no-store), userinfo the contract's 401/403 with a Bearer
// challenge. The authorization endpoint is fuzzed in oauth-authorize.test.ts.

let t: TestApp;
let world: World;
let log: ErrorLog;
let user: User;
let accessToken: string;
beforeAll(async () => {
  t = await startTestApp();
  world = await buildWorld(t);
  log = new ErrorLog(t);
  user = await createUser(t);
  const { code, verifier } = await issueCode(['openid', 'profile', 'email', 'api']);
  const exchanged = await send('/oauth/token', [['Content-Type', 'application/x-www-form-urlencoded']], exchangeForm(code, verifier));
  accessToken = (exchanged.json as { access_token: string }).access_token;
});
afterAll(async () => {
  printTally();
  await t.close();
});

/** A code as the authorization endpoint issues it after consent. */
async function issueCode(scopes = ['openid', 'api']): Promise<{ code: string; verifier: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const application = (await t.get(ApplicationsService).findByClientId(world.app.clientId))!;
  const code = await t.get(AuthorizationCodesService).issue(
    {
      application,
      redirectUri: REDIRECT_URI,
      scopes,
      codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
      nonce: 'n',
    },
    user.id,
    { authTime: t.clock.now(), amr: ['pwd'] },
  );
  return { code, verifier };
}

function exchangeForm(code: string, verifier: string): string {
  return new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT_URI,
    client_id: world.app.clientId,
    client_secret: world.app.clientSecret,
  }).toString();
}

async function send(path: string, headers: [string, string | Buffer][], body: string | undefined, method = 'POST'): Promise<Answer> {
  return sendRaw(t.url, { method, target: path, headers, body });
}

const PARAMS = [
  'grant_type',
  'code',
  'client_id',
  'client_secret',
  'redirect_uri',
  'code_verifier',
  'scope',
  'state',
  'token',
  'token_type_hint',
];

/** Values around the real ones: the client's id and secret, a real-looking code, the registered redirect URI. */
function paramValue(name: string): fc.Arbitrary<string> {
  const real: Record<string, fc.Arbitrary<string>> = {
    grant_type: fc.oneof(
      { weight: 4, arbitrary: fc.constant('authorization_code') },
      fc.constantFrom(
        'refresh_token',
        'client_credentials',
        'password',
        'AUTHORIZATION_CODE',
        'urn:ietf:params:oauth:grant-type:device_code',
      ),
    ),
    client_id: fc.constant(world.app.clientId),
    client_secret: fc.constantFrom(world.app.clientSecret, world.app.clientSecret.slice(0, -1), `${world.app.clientSecret}x`),
    redirect_uri: fc.constantFrom(REDIRECT_URI, `${REDIRECT_URI}/`, REDIRECT_URI.toUpperCase(), 'http://localhost:4000/callback?x=1'),
    code: fc.constantFrom('agora_oac_' + 'A'.repeat(43), randomBytes(32).toString('base64url')),
    code_verifier: fc.stringMatching(/^[A-Za-z0-9._~-]{43,128}$/),
    token: fc.constantFrom('agora_oat_' + 'A'.repeat(43), world.token, accessToken),
  };
  return mostlyReal(Object.hasOwn(real, name) ? real[name]! : hostileText);
}

/** Name/value pairs of a client request: known names (sometimes twice), values real or hostile. */
const clientParams = (path: string): fc.Arbitrary<[string, string][]> =>
  paramsAround(
    path === '/oauth/token'
      ? ['grant_type', 'code', 'redirect_uri', 'code_verifier', 'client_id', 'client_secret']
      : ['token', 'token_type_hint', 'client_id', 'client_secret'],
    paramValue,
  );

/**
 * HTTP Basic credentials broken the ways the header text boundary refuses: a NUL or a control character
 * in either half (raw or percent-encoded), bytes that are not UTF-8, base64 that is not canonical, no
 * colon, and far too long. Each must be invalid_client with the Basic challenge, never a 5xx.
 */
const malformedBasic: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(fc.constantFrom('\u0000', '%00', '\u0007', '%1B', '\u007f', '%ED%A0%80', '%zz'), fc.boolean())
    .map(([bad, inId]) => `Basic ${Buffer.from(inId ? `a${bad}b:secret` : `${world.app.clientId}:s${bad}`, 'utf8').toString('base64')}`),
  fc.uint8Array({ minLength: 1, maxLength: 48 }).map((bytes) => `Basic ${Buffer.from(bytes).toString('base64')}`),
  fc.uint8Array({ minLength: 1, maxLength: 48 }).map((bytes) => `Basic ${Buffer.from(bytes).toString('base64').replace(/=+$/, '')}`),
  fc.constantFrom('Basic ADoA', 'Basic AA==', 'Basic Oh==', 'Basic YTpi0', 'Basic YWJj', 'Basic  Og==', 'BASIC Og=='),
  fc.integer({ min: 700, max: 40_000 }).map((n) => `Basic ${Buffer.from(`${world.app.clientId}:${'s'.repeat(n)}`).toString('base64')}`),
);

/** HTTP Basic client credentials, right, wrong or garbled. */
const authorization = (): fc.Arbitrary<string | Buffer | undefined> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    fc.constant(`Basic ${Buffer.from(`${world.app.clientId}:${world.app.clientSecret}`).toString('base64')}`),
    fc.tuple(mostlyReal(fc.constant('CLIENT')), hostileText).map(([id, secret]) => {
      const clientId = id === 'CLIENT' ? world.app.clientId : id;
      return `Basic ${Buffer.from(`${clientId}:${secret}`, 'utf8').toString('base64')}`;
    }),
    hostileText.map((text) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`),
    fc.constantFrom(
      'Basic',
      'Basic ',
      'Basic ====',
      'Basic Og==',
      'Basic %%%',
      'basic Og==',
      'Bearer x',
      'Digest x',
      'Basic Og==, Basic Og==',
    ),
    hostileText.map((text) => `Basic ${text}`),
    malformedBasic,
    hostileText.map((text) => Buffer.from(text.replace(/[\r\n]/g, ''), 'utf8')),
    fc.uint8Array({ minLength: 1, maxLength: 40 }).map((bytes) => Buffer.from(bytes.filter((b) => b !== 10 && b !== 13))),
  );

const contentType = fc.constantFrom(
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=utf-8',
  'application/x-www-form-urlencoded; charset=iso-8859-1',
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/xml',
  '',
);

/** A client request body in the form its content type says, or in another. */
const clientBody = (path: string) =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(clientParams(path), urlEncoding)
        .map(([pairs, encoding]) => ({ form: true, text: encodePairs(pairs, encoding), pairs })),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          clientParams(path),
          fc.oneof(
            { weight: 3, arbitrary: fc.constant([]) },
            { weight: 1, arbitrary: fc.array(fc.tuple(fc.constantFrom(...PARAMS), junk), { maxLength: 2 }) },
          ),
        )
        .map(([pairs, extra]) => ({ form: false, text: toJson(Object.fromEntries([...pairs, ...extra])), pairs })),
    },
    { weight: 1, arbitrary: junk.map((value) => ({ form: false, text: toJson(value), pairs: [] as [string, string][] })) },
    { weight: 1, arbitrary: hostileText.map((text) => ({ form: false, text, pairs: [] as [string, string][] })) },
  );

describe('client endpoints: token, revoke, introspect, device authorization', () => {
  it.each(['/oauth/token', '/oauth/revoke', '/oauth/introspect', '/oauth/device_authorization'])(
    '%s with any parameters, body type and client credentials',
    async (path) => {
      await fc.assert(
        fc.asyncProperty(
          clientBody(path),
          fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: contentType }),
          authorization(),
          async (body, type, basic) => {
            const headers: [string, string | Buffer][] = [];
            const declared = type ?? (body.form ? 'application/x-www-form-urlencoded' : 'application/json');
            if (declared) headers.push(['Content-Type', declared]);
            if (basic !== undefined) headers.push(['Authorization', basic]);
            const request = `POST ${path} ${JSON.stringify(headers.map(([n, v]) => [n, v.toString()]))} ${body.text.slice(0, 1000)}`;
            log.mark();
            expectOAuthClientAnswer(request, await send(path, headers, body.text));
            log.expectNone(request);
          },
        ),
        fuzzParameters(path === '/oauth/token' ? 2 : 1),
      );
    },
  );

  it('/oauth/token redeeming a real code with hostile companions', async () => {
    const companions = fc.record(
      {
        code_verifier: fc.oneof(fc.constant('RIGHT'), paramValue('code_verifier')),
        redirect_uri: paramValue('redirect_uri'),
        client_secret: paramValue('client_secret'),
        scope: hostileText,
        grant_type: mostlyReal(fc.constant('authorization_code'), 6),
      },
      { requiredKeys: ['grant_type'] },
    );
    await fc.assert(
      fc.asyncProperty(companions, fc.boolean(), urlEncoding, async (extra, asJson, encoding) => {
        const { code, verifier } = await issueCode();
        const params: Record<string, string> = { code, client_id: world.app.clientId, ...extra };
        if (params.code_verifier === 'RIGHT') params.code_verifier = verifier;
        const text = asJson ? toJson(params) : encodePairs(Object.entries(params), encoding);
        const headers: [string, string][] = [['Content-Type', asJson ? 'application/json' : 'application/x-www-form-urlencoded']];
        const request = `POST /oauth/token ${text}`;
        log.mark();
        expectOAuthClientAnswer(request, await send('/oauth/token', headers, text));
        log.expectNone(request);
      }),
      fuzzParameters(0.5),
    );
  });

  it('bodies over and under the 1 MB limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        hugeText,
        fc.constantFrom('/oauth/token', '/oauth/revoke', '/oauth/introspect'),
        fc.boolean(),
        async (text, path, asJson) => {
          const body = asJson
            ? toJson({ grant_type: 'authorization_code', code: text })
            : `grant_type=authorization_code&code=${encodeURIComponent(text.replace(/[\uD800-\uDFFF]/g, ''))}`;
          const headers: [string, string][] = [['Content-Type', asJson ? 'application/json' : 'application/x-www-form-urlencoded']];
          const request = `POST ${path} (${body.length} bytes)`;
          log.mark();
          expectOAuthClientAnswer(request, await send(path, headers, body));
          log.expectNone(request);
        },
      ),
      fuzzParameters(0.05),
    );
  });
});

describe('userinfo', () => {
  const bearer = fc.oneof(
    fc.constant(undefined),
    hostileText.map((text) => `Bearer ${text}`),
    fc.constantFrom('Bearer', 'Bearer ', 'bearer x', 'Basic Og==', 'Bearer a b', 'Bearer agora_oat_', 'Bearer agora_pat_x'),
    fc.constant('REAL'),
    hostileText.map((text) => `Bearer REAL${text}`),
    fc
      .uint8Array({ minLength: 1, maxLength: 40 })
      .map((bytes) => Buffer.from([...Buffer.from('Bearer '), ...bytes.filter((b) => b !== 10 && b !== 13)])),
  );
  const privateToken = fc.oneof(
    { weight: 4, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.oneof(hostileText, fc.constant('REAL_PAT')) },
  );

  it('GET and POST /oauth/userinfo with any credentials', async () => {
    await fc.assert(
      fc.asyncProperty(bearer, privateToken, fc.constantFrom('GET', 'POST'), async (auth, pat, method) => {
        const headers: [string, string | Buffer][] = [];
        if (auth !== undefined) {
          const value = typeof auth === 'string' ? auth.replace('REAL', accessToken) : auth;
          headers.push(['Authorization', value === 'REAL' ? `Bearer ${accessToken}` : value]);
        }
        if (pat !== null) headers.push(['Private-Token', pat === 'REAL_PAT' ? world.token : pat]);
        const request = `${method} /oauth/userinfo ${JSON.stringify(headers.map(([n, v]) => [n, v.toString()]))}`;
        log.mark();
        expectUserinfoAnswer(request, await send('/oauth/userinfo', headers, method === 'POST' ? '' : undefined, method));
        log.expectNone(request);
      }),
      fuzzParameters(),
    );
  });
});
