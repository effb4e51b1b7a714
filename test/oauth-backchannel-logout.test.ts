import { createServer, Server } from 'node:http';
import { createRemoteJWKSet, decodeProtectedHeader, JWTPayload, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { BACKCHANNEL_LOGOUT } from '../src/oauth/logout/backchannel/backchannel-logout.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { TEST_PASSWORD, createUser } from './support/fixtures.js';
import { eventually } from './support/eventually.js';
import { queuesSettled } from './support/job-queue.js';
import { approveInBrowser, authorizationRequest, REDIRECT_URI, RegisteredApp } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';
import { followLink, mailedLink } from './support/account-links.js';
import { runCli } from './support/processes.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';
import { DataSource } from 'typeorm';
import { SessionsService } from '../src/sessions/sessions.service.js';
import type { User } from '../src/users/user.model.js';

const EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** What a relying party's back-channel logout endpoint received, and what it made of it. */
interface Received {
  path: string;
  contentType: string | undefined;
  /** The logout token's claims, once it passed every check of §2.6; or why it did not. */
  claims?: JWTPayload;
  token?: string;
  refused?: string;
}

let t: TestApp;
let smtp: TestSmtpServer;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
/** Paths whose next answers are failures (a receiver that is down for a moment). */
const failuresLeft = new Map<string, number>();

/**
 * The relying party's back-channel logout endpoint, validating the logout token as OpenID Connect
 * Back-Channel Logout 1.0 §2.6 asks: the signature against the provider's JWKS, iss, aud, iat, typ,
 * the event, sub or sid, and no nonce.
 */
function relyingPartyReceiver(jwks: ReturnType<typeof createRemoteJWKSet>, audiences: () => Map<string, string>): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const path = req.url!;
        const record: Received = { path, contentType: req.headers['content-type'] };
        const failures = failuresLeft.get(path) ?? 0;
        if (failures > 0) {
          failuresLeft.set(path, failures - 1);
          received.push({ ...record, refused: 'receiver down' });
          res.writeHead(503).end();
          return;
        }
        try {
          const form = new URLSearchParams(Buffer.concat(chunks).toString());
          const token = form.get('logout_token');
          if (!token) throw new Error('no logout_token');
          const { payload, protectedHeader } = await jwtVerify(token, jwks, {
            issuer: t.config.baseUrl,
            audience: audiences().get(path),
            typ: 'logout+jwt',
            requiredClaims: ['iat', 'jti', 'events'],
            maxTokenAge: '2 minutes',
          });
          expect(protectedHeader.alg).toBe(algorithms.get(path) ?? 'RS256');
          expect(payload.events).toEqual({ [EVENT]: {} });
          expect(payload.sub ?? payload.sid).toBeDefined();
          expect(payload).not.toHaveProperty('nonce');
          received.push({ ...record, claims: payload, token });
          res.writeHead(200).end();
        } catch (err) {
          received.push({ ...record, refused: String(err) });
          res.writeHead(400).end();
        }
      })();
    });
  });
}

const audiences = new Map<string, string>();
/** The signing algorithm each listening client chose (RS256 when absent): its logout tokens come so. */
const algorithms = new Map<string, string>();

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestApp({
    SMTP_URL: smtp.url,
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOKS_ALLOW_HTTP: 'true',
    JOBS_RETRY_DELAY_SECONDS: '1',
    OAUTH_DYNAMIC_REGISTRATION: 'true',
  });
  receiver = relyingPartyReceiver(createRemoteJWKSet(new URL(`${t.url}/oauth/discovery/keys`)), () => audiences);
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const address = receiver.address() as { port: number };
  receiverUrl = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => {
  await new Promise((resolve) => receiver?.close(resolve));
  await t?.close();
  await smtp?.close();
});

/** A confidential client that listens at `path` of the receiver. */
async function listeningApp(path: string | null, alg?: 'ES256' | 'EdDSA'): Promise<RegisteredApp & { alg?: string }> {
  const owner = await createUser(t);
  const { application, clientSecret } = await t.get(ApplicationsService).create(owner.id, {
    name: 'Back-channel RP',
    redirectUris: [REDIRECT_URI],
    scopes: ['openid', 'profile', 'api', 'offline_access'],
    backchannelLogoutUri: path === null ? null : `${receiverUrl}${path}`,
    backchannelLogoutSessionRequired: true,
    ...(alg && { idTokenSignedResponseAlg: alg }),
  });
  if (path) audiences.set(path, application.clientId);
  if (path && alg) algorithms.set(path, alg);
  return { clientId: application.clientId, clientSecret: clientSecret!, applicationId: application.id, alg };
}

/** Signs `user` in in a new browser and has `app` get an id_token in that session; returns the browser and the claims. */
async function signInThrough(app: RegisteredApp & { alg?: string }, user: User, browser = new Browser(t.url), scope = 'openid profile') {
  const config = await configOf(app);
  const request = await authorizationRequest(config, scope);
  const callback = await approveInBrowser(t, request.url, user, browser);
  const tokens = await client.authorizationCodeGrant(config, new URL(callback), {
    pkceCodeVerifier: request.codeVerifier,
    expectedState: request.state,
    expectedNonce: request.nonce,
  });
  return { browser, claims: tokens.claims()!, idToken: tokens.id_token!, tokens, config };
}

/** openid-client's view of a listening app. */
function configOf(app: RegisteredApp & { alg?: string }): Promise<client.Configuration> {
  const metadata = app.alg ? { id_token_signed_response_alg: app.alg } : undefined;
  return client.discovery(new URL(t.url), app.clientId, metadata, client.ClientSecretPost(app.clientSecret), {
    execute: [client.allowInsecureRequests],
  });
}

async function csrfOf(browser: Browser, path = '/account'): Promise<string> {
  return formFields(await (await browser.get(path)).text())._csrf!;
}

const receivedAt = (path: string) => received.filter((r) => r.path === path);

describe('back-channel logout (OpenID Connect Back-Channel Logout 1.0)', () => {
  it('discovery advertises it, with sessions, and sid among the claims', async () => {
    const metadata = (await (await fetch(`${t.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ backchannel_logout_supported: true, backchannel_logout_session_supported: true });
    expect(metadata.claims_supported).toContain('sid');
  });

  it('signing out posts a valid logout token, with the id_token’s sub and sid, to every client that got an id_token in the session', async () => {
    const user = await createUser(t);
    const first = await listeningApp('/rp-a');
    const second = await listeningApp('/rp-b');
    const elsewhere = await listeningApp('/rp-other-session');
    const { browser, claims } = await signInThrough(first, user);
    expect(typeof claims.sid).toBe('string');
    const again = await signInThrough(second, user, browser);
    expect(again.claims.sid).toBe(claims.sid);
    // The same user in another browser: another session, another sid, not ended here.
    const other = await signInThrough(elsewhere, user);
    expect(other.claims.sid).not.toBe(claims.sid);

    const signedOut = await browser.post('/sign-out', { _csrf: await csrfOf(browser) });
    expect(signedOut.status).toBe(303);

    for (const [path, app] of [
      ['/rp-a', first],
      ['/rp-b', second],
    ] as const) {
      const [delivered] = await eventually(() => {
        const got = receivedAt(path);
        expect(got).toHaveLength(1);
        return got;
      });
      expect(delivered!.refused).toBeUndefined();
      expect(delivered!.contentType).toBe('application/x-www-form-urlencoded');
      expect(delivered!.claims).toMatchObject({ iss: t.config.baseUrl, aud: app.clientId, sub: user.id, sid: claims.sid });
      expect(typeof delivered!.claims!.jti).toBe('string');
    }
    expect(receivedAt('/rp-other-session')).toEqual([]);
  });

  it('signs the logout token with the algorithm the client chose for its id_tokens (ES256, EdDSA)', async () => {
    for (const alg of ['ES256', 'EdDSA'] as const) {
      const user = await createUser(t);
      const path = `/rp-${alg.toLowerCase()}`;
      const app = await listeningApp(path, alg);
      const { browser, idToken } = await signInThrough(app, user);
      expect(decodeProtectedHeader(idToken).alg).toBe(alg);
      expect((await browser.post('/sign-out', { _csrf: await csrfOf(browser) })).status).toBe(303);
      const [delivered] = await eventually(() => {
        const got = receivedAt(path);
        expect(got).toHaveLength(1);
        return got;
      });
      expect(delivered!.refused).toBeUndefined();
      expect(decodeProtectedHeader(delivered!.token!).alg).toBe(alg);
    }
  });

  it('a receiver that fails is tried again until it answers 2xx', async () => {
    const user = await createUser(t);
    const app = await listeningApp('/rp-flaky');
    failuresLeft.set('/rp-flaky', 1);
    const { browser, claims } = await signInThrough(app, user);
    await browser.post('/sign-out', { _csrf: await csrfOf(browser) });
    const attempts = await eventually(() => {
      const got = receivedAt('/rp-flaky');
      expect(got.filter((r) => r.claims)).toHaveLength(1);
      return got;
    }, 30_000);
    expect(attempts[0]!.refused).toBe('receiver down');
    expect(attempts.at(-1)!.claims).toMatchObject({ sub: user.id, sid: claims.sid });
  });

  it('RP-initiated logout and a session ended from the security page tell the clients too', async () => {
    const user = await createUser(t);
    const app = await listeningApp('/rp-logout');
    const { browser, claims, idToken } = await signInThrough(app, user);
    const logout = await browser.get(`/oauth/logout?id_token_hint=${idToken}`);
    expect([200, 302, 303]).toContain(logout.status);
    await eventually(() => expect(receivedAt('/rp-logout').map((r) => r.claims?.sid)).toEqual([claims.sid]));

    const app2 = await listeningApp('/rp-security');
    const elsewhere = await signInThrough(app2, user);
    const here = new Browser(t.url);
    await here.follow(await signIn(here, user.username, TEST_PASSWORD));
    const sessions = await here.get('/account/security');
    const html = await sessions.text();
    const ids = [...html.matchAll(/action="\/account\/sessions\/([0-9a-f-]{36})\/sign-out"/g)].map((m) => m[1]!);
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) await here.post(`/account/sessions/${id}/sign-out`, { _csrf: formFields(html)._csrf! });
    await eventually(() => expect(receivedAt('/rp-security').map((r) => r.claims?.sid)).toEqual([elsewhere.claims.sid]));
  });

  it('an id_token issued by a refresh carries the sid of the session the code came from, and its end is told', async () => {
    const user = await createUser(t);
    const app = await listeningApp('/rp-refresh');
    const { browser, claims, tokens, config } = await signInThrough(app, user, undefined, 'openid profile offline_access');
    expect(typeof claims.sid).toBe('string');
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.claims()).toMatchObject({ sub: claims.sub, sid: claims.sid, auth_time: claims.auth_time });
    // The successor keeps it too.
    const again = await client.refreshTokenGrant(config, refreshed.refresh_token!);
    expect(again.claims()!.sid).toBe(claims.sid);

    await browser.post('/sign-out', { _csrf: await csrfOf(browser) });
    await eventually(() => expect(receivedAt('/rp-refresh').map((r) => r.claims?.sid)).toEqual([claims.sid]));
  });

  it('a device flow’s id_token carries the sid of the session that approved it at the verification page, and its end is told', async () => {
    const user = await createUser(t);
    const web = await listeningApp('/rp-device-web');
    const device = await listeningApp('/rp-device');
    // An id_token from the code flow in the same browser names the session the device is approved in.
    const { browser, claims } = await signInThrough(web, user);
    const config = await configOf(device);
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid profile' });
    const consent = await browser.post('/oauth/device', {
      ...formFields(await (await browser.get('/oauth/device')).text()),
      user_code: started.user_code,
    });
    expect(consent.status).toBe(200);
    expect((await browser.post('/oauth/device', { ...formFields(await consent.text()), decision: 'approve' })).status).toBe(303);
    const tokens = await client.pollDeviceAuthorizationGrant(config, { ...started, interval: 0 });
    expect(tokens.claims()).toMatchObject({ sub: user.id, aud: device.clientId, sid: claims.sid });

    await browser.post('/sign-out', { _csrf: await csrfOf(browser) });
    await eventually(() => expect(receivedAt('/rp-device').map((r) => r.claims?.sid)).toEqual([claims.sid]));
  });

  it('a password reset ends every session of the user, and each one’s clients are told', async () => {
    const user = await createUser(t);
    const app = await listeningApp('/rp-reset');
    const first = await signInThrough(app, user);
    const second = await signInThrough(app, user);
    const browser = new Browser(t.url);
    const form = formFields(await (await browser.get('/forgot-password')).text());
    expect((await browser.post('/forgot-password', { ...form, email: user.email })).status).toBe(303);
    const reset = await followLink(browser, await mailedLink(smtp, user.email, '/reset-password'), { password: 'a-brand-new-passphrase' });
    expect(reset.status).toBe(303);
    await eventually(() =>
      expect(
        receivedAt('/rp-reset')
          .map((r) => r.claims?.sid)
          .sort(),
      ).toEqual([first.claims.sid, second.claims.sid].sort()),
    );
  });

  it('blocking the user (users:block) ends their sessions, and the clients are told', async () => {
    const user = await createUser(t);
    const app = await listeningApp('/rp-blocked');
    const { claims } = await signInThrough(app, user);
    const blocked = await runCli(t.databaseEnv, 'users:block', '--user', user.username);
    expect(blocked.json).toMatchObject({ state: 'blocked', sessionsEnded: 1 });
    await eventually(() => expect(receivedAt('/rp-blocked').map((r) => r.claims?.sid)).toEqual([claims.sid]));
  });

  it('a session that expires is told when housekeeping purges it', async () => {
    const user = await createUser(t);
    const app = await listeningApp('/rp-expired');
    const expiring = await signInThrough(app, user);
    const staying = await signInThrough(app, user);
    // The first browser's session reached its end (the clock is left alone: logout tokens are checked against real time).
    const db = t.get(DataSource);
    const [first] = (await db.query('SELECT id FROM sessions WHERE user_id = $1 ORDER BY auth_time LIMIT 1', [user.id])) as {
      id: string;
    }[];
    await db.query('UPDATE sessions SET expires_at = $1 WHERE id = $2', [new Date(t.clock.now().getTime() - 1000), first!.id]);
    // In batches of one, to go round the loop.
    expect(await t.get(SessionsService).purgeExpired(1)).toBe(1);
    await eventually(() => expect(receivedAt('/rp-expired').map((r) => r.claims?.sid)).toEqual([expiring.claims.sid]));
    expect(staying.claims.sid).not.toBe(expiring.claims.sid);
  });

  it('a client without a back-channel logout URI is not told, and its id_tokens still carry sid', async () => {
    const user = await createUser(t);
    const quiet = await listeningApp(null);
    const before = received.length;
    const { browser, claims } = await signInThrough(quiet, user);
    expect(typeof claims.sid).toBe('string');
    await browser.post('/sign-out', { _csrf: await csrfOf(browser) });
    // A logout job is written with the session's end: every one written by now has run.
    await queuesSettled(t.get(DataSource), [BACKCHANNEL_LOGOUT.queue]);
    expect(received.length).toBe(before);
  });

  it('dynamic registration accepts backchannel_logout_uri and backchannel_logout_session_required, and refuses a bad one', async () => {
    const register = (body: Record<string, unknown>) =>
      fetch(`${t.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const ok = await register({
      redirect_uris: ['https://rp.example/callback'],
      backchannel_logout_uri: 'https://rp.example/backchannel',
      backchannel_logout_session_required: true,
    });
    expect(ok.status).toBe(201);
    expect(await ok.json()).toMatchObject({
      backchannel_logout_uri: 'https://rp.example/backchannel',
      backchannel_logout_session_required: true,
    });
    for (const [value, message] of [
      ['https://rp.example/backchannel#x', /backchannel_logout_uri: .*fragment/],
      ['http://rp.example/backchannel', /backchannel_logout_uri: .*https/],
      ['not a url', /backchannel_logout_uri: .*absolute/],
    ] as const) {
      const refused = await register({ redirect_uris: ['https://rp.example/callback'], backchannel_logout_uri: value });
      expect(refused.status).toBe(400);
      const body = (await refused.json()) as { error: string; error_description: string };
      expect(body.error).toBe('invalid_client_metadata');
      expect(body.error_description).toMatch(message);
    }
    const wrongType = await register({ redirect_uris: ['https://rp.example/callback'], backchannel_logout_session_required: 'yes' });
    expect(((await wrongType.json()) as { error: string }).error).toBe('invalid_client_metadata');
  });

  it('a logout token is never accepted as an id_token_hint', async () => {
    const user = await createUser(t);
    const app = await listeningApp('/rp-hint');
    const { browser } = await signInThrough(app, user);
    await browser.post('/sign-out', { _csrf: await csrfOf(browser) });
    const [delivered] = await eventually(() => {
      const got = receivedAt('/rp-hint').filter((r) => r.token);
      expect(got).toHaveLength(1);
      return got;
    });
    expect(decodeProtectedHeader(delivered!.token!).typ).toBe('logout+jwt');
    const res = await new Browser(t.url).get(`/oauth/logout?id_token_hint=${delivered!.token}`);
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/not an ID token issued by this server/);
  });
});
