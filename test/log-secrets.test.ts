import { simpleParser } from 'mailparser';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, formFields, signIn } from './support/browser.js';
import { createTestDatabase, TestDatabase } from './support/database.js';
import { ServerProcess, startServer, waitForHttp } from './support/processes.js';
import { freePort } from './support/test-app.js';

// The built server at its most verbose log level runs every flow that creates or sends a secret; then
// its whole output is searched for each of them, as sent and in the encodings a log could hold them in.

const REDIRECT_URI = 'http://localhost:4000/callback';
const AFTER_LOGOUT = 'http://localhost:4000/signed-out';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

let db: TestDatabase;
let server: ServerProcess;
let base: string;
/** Where the server writes its mail (no SMTP_URL): DATA_DIR/mail. */
let dataDir: string;
let ownDataDir = false;

/** Every secret the run created or sent, by what it is. */
const secrets = new Map<string, string>();
function keep(label: string, value: string | undefined | null): string {
  if (!value) throw new Error(`the run did not get its ${label}`);
  secrets.set(label, value);
  return value;
}

beforeAll(async () => {
  db = await createTestDatabase();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  ownDataDir = !db.env.DATA_DIR;
  dataDir = db.env.DATA_DIR || mkdtempSync(join(tmpdir(), 'agora-log-secrets-'));
  server = startServer({
    ...db.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: base,
    LOG_LEVEL: 'trace',
    OAUTH_DYNAMIC_REGISTRATION: 'true',
  });
  await waitForHttp(`${base}/healthz`, server);
});

afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  await db.drop();
  if (ownDataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** The link of this kind in the newest mail to this address, once it is written. */
async function mailedLink(to: string, path: string): Promise<string> {
  for (let tries = 0; tries < 100; tries++) {
    const dir = join(dataDir, 'mail');
    const files = (() => {
      try {
        return readdirSync(dir).sort().reverse();
      } catch {
        return [];
      }
    })();
    for (const file of files) {
      const mail = await simpleParser(readFileSync(join(dir, file)));
      const link = mail.text?.match(new RegExp(`${base}(${path.replace('?', '\\?')}[A-Za-z0-9_-]{65})`));
      if (mail.to && JSON.stringify(mail.to).includes(to) && link) return link[1]!;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no mail with a ${path} link to ${to}`);
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function form(path: string, body: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function graphql(query: string, headers: Record<string, string>, variables?: Record<string, unknown>) {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** Signs up through the page, follows the verification link mailed, and signs in: the browser keeps the session. */
async function signUp(browser: Browser, username: string, password: string): Promise<void> {
  const page = await browser.get('/sign-up');
  const res = await browser.post('/sign-up', {
    ...formFields(await page.text()),
    name: 'Log Reader',
    username,
    email: `${username}@example.com`,
    password,
  });
  expect(res.status).toBe(303);
  const link = await mailedLink(`${username}@example.com`, '/verify-email?token=');
  keep('e-mail verification token', new URL(link, base).searchParams.get('token'));
  const verify = await browser.get(link);
  expect(verify.status).toBe(200);
  expect((await browser.post('/verify-email', formFields(await verify.text()))).status).toBe(303);
  expect((await signIn(browser, username, password)).status).toBe(303);
}

async function createPersonalToken(browser: Browser): Promise<string> {
  const { _csrf } = formFields(await (await browser.get('/account')).text());
  const body = new URLSearchParams({ _csrf: _csrf!, name: 'log test', expires_at: '' });
  body.append('scopes', 'api');
  expect((await browser.post('/account/tokens', body)).status).toBe(303);
  const page = await (await browser.get('/account')).text();
  return /<code id="new-token" class="secret">(agora_pat_[0-9A-Za-z]+)<\/code\s*>/.exec(page)![1]!;
}

async function registerApplication(browser: Browser): Promise<{ clientId: string; clientSecret: string }> {
  const { _csrf } = formFields(await (await browser.get('/applications')).text());
  const body = new URLSearchParams({
    _csrf: _csrf!,
    name: 'Log Test Client',
    redirect_uris: REDIRECT_URI,
    post_logout_redirect_uris: AFTER_LOGOUT,
    client_type: 'confidential',
  });
  for (const scope of ['openid', 'profile', 'api', 'offline_access']) body.append('scopes', scope);
  const res = await browser.post('/applications', body);
  expect(res.status).toBe(303);
  const page = await (await browser.get(res.headers.get('location')!)).text();
  return {
    clientId: /<code id="client-id">([^<]+)<\/code>/.exec(page)![1]!,
    clientSecret: /<code id="client-secret" class="secret">(agora_ocs_[0-9A-Za-z]+)<\/code\s*>/.exec(page)![1]!,
  };
}

/** The encodings a secret could reach a log line in, by name. */
function encodings(value: string): Record<string, string> {
  return {
    'as sent': value,
    'URL-encoded': encodeURIComponent(value),
    'form-encoded': new URLSearchParams({ v: value }).toString().slice(2),
    'twice URL-encoded': encodeURIComponent(encodeURIComponent(value)),
    'JSON-escaped': JSON.stringify(value).slice(1, -1),
    base64: Buffer.from(value).toString('base64'),
  };
}

it('writes none of the secrets a whole run created or sent to the log, in any common encoding', async () => {
  // Sign-up with a password, a wrong password, sign-in.
  const username = `logs-${randomBytes(4).toString('hex')}`;
  const password = keep('password', `pw-${randomBytes(12).toString('hex')}`);
  const browser = new Browser(base);
  await signUp(browser, username, password);
  keep('session cookie', browser.cookie('agora_session'));
  const wrong = keep('wrong password', `wrong-${randomBytes(12).toString('hex')}`);
  expect((await signIn(new Browser(base), username, wrong)).status).toBe(401);
  const second = new Browser(base);
  expect((await signIn(second, username, password)).status).toBe(303);
  keep('second session cookie', second.cookie('agora_session'));

  // A personal access token: made on the account page, used in every place a client could put it.
  const pat = keep('personal access token', await createPersonalToken(browser));
  expect((await graphql('{ viewer { id } }', { authorization: `Bearer ${pat}` })).status).toBe(200);
  expect((await fetch(`${base}/api/user`, { headers: { 'private-token': pat } })).status).toBe(200);
  expect(
    (await fetch(`${base}/graphql?query=${encodeURIComponent('{ viewer { id } }')}`, { headers: { 'private-token': pat } })).status,
  ).toBe(200);
  await fetch(`${base}/api/user?private_token=${pat}`);
  await fetch(`${base}/api/user?access_token=${pat}`);
  await fetch(`${base}/api/user?${pat}`);
  await fetch(`${base}/no-such-page/${pat}`);
  const wrongPat = keep('wrong personal token', `agora_pat_${randomBytes(36).toString('base64url').replace(/[-_]/g, 'x')}`);
  expect((await graphql('{ viewer { id } }', { authorization: `Bearer ${wrongPat}` })).status).toBe(401);
  // Bad input that quotes itself back: a field, a variable and a body made of a secret.
  await graphql(`{ viewer { ${pat} } }`, { authorization: `Bearer ${pat}` });
  await graphql('query ($id: ID!) { node(id: $id) { id } }', { authorization: `Bearer ${pat}` }, { id: pat });
  await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"query": ${pat}` });

  // An OAuth application and its secret, made on the applications page.
  const { clientId, clientSecret } = await registerApplication(browser);
  keep('client secret', clientSecret);
  keep('Basic credentials', basic(clientId, clientSecret));

  // The authorization code flow with PKCE, state and nonce.
  const verifier = keep('PKCE verifier', randomBytes(32).toString('base64url'));
  const state = keep('state', randomBytes(16).toString('base64url'));
  const nonce = keep('nonce', randomBytes(16).toString('base64url'));
  const authorize = `/oauth/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope: 'openid profile api offline_access',
    state,
    nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  })}`;
  const consent = await browser.get(authorize);
  expect(consent.status).toBe(200);
  const approved = await browser.post('/oauth/authorize', { ...formFields(await consent.text()), decision: 'approve' });
  expect(approved.status).toBe(302);
  const code = keep('authorization code', new URL(approved.headers.get('location')!).searchParams.get('code'));
  const wrongSecret = keep('wrong client secret', `agora_ocs_${randomBytes(36).toString('hex').slice(0, 49)}`);
  expect(
    (
      await form(
        '/oauth/token',
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier },
        {
          authorization: basic(clientId, wrongSecret),
        },
      )
    ).status,
  ).toBe(401);
  const tokens = await form(
    '/oauth/token',
    { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier },
    { authorization: basic(clientId, clientSecret) },
  );
  expect(tokens.status).toBe(200);
  const accessToken = keep('access token', tokens.body.access_token);
  const refreshToken = keep('refresh token', tokens.body.refresh_token);
  const idToken = keep('id_token', tokens.body.id_token);
  expect((await fetch(`${base}/oauth/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } })).status).toBe(200);
  // Refresh rotation.
  const rotated = await form('/oauth/token', {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: clientId,
    client_secret: clientSecret,
  });
  expect(rotated.status).toBe(200);
  const rotatedAccess = keep('rotated access token', rotated.body.access_token);
  const rotatedRefresh = keep('rotated refresh token', rotated.body.refresh_token);
  keep('rotated id_token', rotated.body.id_token);
  // Introspection and revocation.
  const introspected = await form('/oauth/introspect', { token: rotatedAccess }, { authorization: basic(clientId, clientSecret) });
  expect(introspected.body.active).toBe(true);
  expect((await form('/oauth/revoke', { token: rotatedRefresh }, { authorization: basic(clientId, clientSecret) })).status).toBe(200);
  // The code again: refused.
  await form(
    '/oauth/token',
    { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier },
    {
      authorization: basic(clientId, clientSecret),
    },
  );
  // Malformed Basic credentials: a NUL in the client id, the real secret after it.
  keep('malformed Basic credentials', `Basic ${Buffer.from(`\u0000:${clientSecret}`).toString('base64')}`);
  await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: secrets.get('malformed Basic credentials')! },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: rotatedRefresh }),
  });

  // RP-initiated logout with the id_token as a hint, by GET and by form post.
  const logoutQuery = new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: AFTER_LOGOUT, state });
  expect((await second.get(`/oauth/logout?${logoutQuery}`)).status).toBeLessThan(500);
  expect((await new Browser(base).post('/oauth/logout', Object.fromEntries(logoutQuery))).status).toBeLessThan(500);

  // The device flow: the user code in the link, through sign-in (return_to) and back, then approval.
  const started = await form('/oauth/device_authorization', { scope: 'openid api' }, { authorization: basic(clientId, clientSecret) });
  expect(started.status).toBe(200);
  const deviceCode = keep('device code', started.body.device_code);
  const userCode = keep('user code', started.body.user_code);
  keep('user code without its dash', userCode.replace('-', ''));
  const device = new Browser(base);
  const link = new URL(started.body.verification_uri_complete as string);
  const toSignIn = await device.get(link.pathname + link.search);
  expect(toSignIn.status).toBe(303);
  const back = await signIn(device, username, password, new URL(toSignIn.headers.get('location')!, base).searchParams.get('return_to')!);
  const filled = await device.get(back.headers.get('location')!);
  expect(filled.status).toBe(200);
  const deviceConsent = await device.post('/oauth/device', formFields(await filled.text()));
  expect(deviceConsent.status).toBe(200);
  expect((await device.post('/oauth/device', { ...formFields(await deviceConsent.text()), decision: 'approve' })).status).toBe(303);
  const deviceTokens = await form(
    '/oauth/token',
    { grant_type: DEVICE_GRANT, device_code: deviceCode },
    { authorization: basic(clientId, clientSecret) },
  );
  expect(deviceTokens.status).toBe(200);
  keep('device access token', deviceTokens.body.access_token);
  keep('device id_token', deviceTokens.body.id_token);

  // Dynamic client registration: the secret it answers, then used.
  const registered = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Log Test CLI',
      redirect_uris: ['http://127.0.0.1/callback'],
      token_endpoint_auth_method: 'client_secret_basic',
    }),
  });
  expect(registered.status).toBe(201);
  const dynamic = (await registered.json()) as { client_id: string; client_secret: string };
  keep('registered client secret', dynamic.client_secret);
  await form(
    '/oauth/token',
    { grant_type: 'authorization_code', code: 'x', redirect_uri: 'http://127.0.0.1/callback', code_verifier: verifier },
    {
      authorization: basic(dynamic.client_id, dynamic.client_secret),
    },
  );

  // A password change: a wrong current password, then the right one and a new password.
  const security = async () => formFields(await (await browser.get('/account/security')).text())._csrf!;
  const wrongCurrent = keep('wrong current password', `wrong-${randomBytes(12).toString('hex')}`);
  const newPassword = keep('new password', `pw-${randomBytes(12).toString('hex')}`);
  const refusedChange = await browser.post('/account/password', {
    _csrf: await security(),
    current_password: wrongCurrent,
    new_password: newPassword,
  });
  expect(refusedChange.status).toBe(422);
  const changed = await browser.post('/account/password', {
    _csrf: await security(),
    current_password: password,
    new_password: newPassword,
  });
  expect(changed.status).toBe(303);

  // The log shows the requests (so searching it means something).
  const log = server.output();
  expect(log).toContain('"msg":"incoming request"');
  const leaks: string[] = [];
  for (const [label, value] of secrets) {
    for (const [encoding, encoded] of Object.entries(encodings(value))) {
      if (log.includes(encoded)) leaks.push(`${label} (${encoding})`);
    }
  }
  expect(leaks).toEqual([]);
  // Redacted by allow-list: the names of query parameters stay, and harmless values.
  expect(log).toMatch(/"url":"\/oauth\/device\?user_code=\[REDACTED\]"/);
  expect(log).toContain(`client_id=${clientId}`);
});
