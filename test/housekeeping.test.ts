import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { PURGE_BATCH_SIZE } from '../src/database/batched-purge.js';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service.js';
import { ApplicationsService } from '../src/oauth/clients/applications.service.js';
import { Browser, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import {
  approveInBrowser,
  authorizationRequest,
  discover,
  issueCode,
  newUserAndApp,
  REDIRECT_URI,
  registerApp,
  RegisteredApp,
  unknownCodeError,
} from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';
import * as client from 'openid-client';

let t: TestApp;
beforeAll(async () => {
  // Every registration here comes from 127.0.0.1: one network, given the whole cap.
  // A cap of 2,000 (not the default 100,000): the cap test fills it with rows, and the rule is the same.
  t = await startTestApp({
    OAUTH_DYNAMIC_REGISTRATION: 'true',
    OAUTH_UNCLAIMED_APPLICATIONS_PER_NETWORK: '1000',
    OAUTH_UNCLAIMED_APPLICATIONS_MAX: '2000',
  });
});
afterAll(() => t.close());

const count = async (table: string): Promise<number> =>
  Number((await t.get(DataSource).query(`SELECT count(*)::int AS n FROM ${table}`))[0].n);

it('purges expired sessions, codes and access tokens, and keeps live ones', async () => {
  const { user, app } = await newUserAndApp(t);
  const config = await discover(t, app);
  const request = await authorizationRequest(config);
  const browser = new Browser(t.url);
  const callback = new URL(await approveInBrowser(t, request.url, user, browser));
  await client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: request.codeVerifier,
    expectedState: request.state,
    expectedNonce: request.nonce,
  });
  expect(await count('sessions')).toBe(1);
  expect(await count('oauth_authorization_codes')).toBe(1);
  expect(await count('oauth_access_tokens')).toBe(1);

  expect(await t.get(HousekeepingService).run()).toEqual({
    sessions: 0,
    codes: 0,
    accessTokens: 0,
    refreshTokens: 0,
    deviceCodes: 0,
    unclaimedApplications: 0,
    knownBrowsers: 0,
    webhookMessages: 0,
  });

  // A day after the token expired, and past the session lifetime.
  t.clock.advance(t.config.sessionTtlMs + 1000);
  await signIn(new Browser(t.url), user.username, TEST_PASSWORD); // a live session to keep
  expect(await t.get(HousekeepingService).run()).toEqual({
    sessions: 1,
    codes: 1,
    accessTokens: 1,
    refreshTokens: 0,
    deviceCodes: 0,
    unclaimedApplications: 0,
    knownBrowsers: 0,
    webhookMessages: 0,
  });
  expect(await count('sessions')).toBe(1);
});

it('runs once per interval however many instances ask at once, and again when an interval has passed', async () => {
  const housekeeping = t.get(HousekeepingService);
  const interval = t.config.housekeepingIntervalMs;
  t.clock.advance(2 * interval); // past any run an earlier test made

  // Every instance's timer firing at the same moment: one claim wins (on PostgreSQL, concurrently).
  const before = t.clock.now().getTime();
  const asked = await Promise.all(Array.from({ length: 5 }, () => housekeeping.runIfDue()));
  expect(asked.filter((purged) => purged !== null)).toHaveLength(1);
  const [row] = await t.get(DataSource).query(`SELECT started_at, finished_at FROM housekeeping_runs`);
  expect(row.started_at.getTime()).toBeGreaterThanOrEqual(before);
  expect(row.started_at.getTime()).toBeLessThanOrEqual(t.clock.now().getTime());
  expect(row.finished_at).not.toBeNull();

  t.clock.advance(interval - 1000);
  expect(await housekeeping.runIfDue()).toBeNull();
  t.clock.advance(1000);
  expect(await housekeeping.runIfDue()).toEqual({
    sessions: expect.any(Number),
    codes: expect.any(Number),
    accessTokens: expect.any(Number),
    refreshTokens: expect.any(Number),
    deviceCodes: expect.any(Number),
    unclaimedApplications: expect.any(Number),
    knownBrowsers: expect.any(Number),
    webhookMessages: expect.any(Number),
  });
});

describe('unclaimed applications (dynamic client registration)', () => {
  const ttl = () => t.config.oauth.unclaimedApplicationTtlMs;

  /** An application registered at POST /oauth/register, owned by nobody. */
  async function registerUnclaimed(): Promise<RegisteredApp & { status: number }> {
    const res = await fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Self-registered', redirect_uris: [REDIRECT_URI], scope: 'openid api' }),
    });
    const body = (await res.json()) as { client_id: string; client_secret: string };
    if (res.status !== 201) return { status: res.status, clientId: '', clientSecret: '', applicationId: '' };
    const application = (await t.get(ApplicationsService).findByClientId(body.client_id))!;
    return { status: res.status, clientId: body.client_id, clientSecret: body.client_secret, applicationId: application.id };
  }

  const exists = async (app: RegisteredApp): Promise<boolean> =>
    (await t.get(DataSource).query(`SELECT 1 FROM oauth_applications WHERE id = $1`, [app.applicationId])).length === 1;

  /** One row naming the application in each table that makes it used, each live long after the test. */
  async function useOnlyIn(table: string, app: RegisteredApp, userId: string): Promise<void> {
    const db = t.get(DataSource);
    const later = new Date(t.clock.now().getTime() + 30 * 86_400_000);
    const hash = () => randomBytes(32).toString('hex');
    const id = randomUUID();
    const statements: Record<string, [string, unknown[]]> = {
      oauth_grants: [`INSERT INTO oauth_grants (user_id, application_id, scopes) VALUES ($1, $2, '{api}')`, [userId, app.applicationId]],
      oauth_authorization_codes: [
        `INSERT INTO oauth_authorization_codes (code_hash, application_id, user_id, redirect_uri, scopes, code_challenge, auth_time, expires_at)
         VALUES ($1, $2, $3, $4, '{api}', $5, $6, $7)`,
        [hash(), app.applicationId, userId, REDIRECT_URI, 'a'.repeat(43), t.clock.now(), later],
      ],
      oauth_access_tokens: [
        `INSERT INTO oauth_access_tokens (token_hash, application_id, user_id, scopes, expires_at) VALUES ($1, $2, $3, '{api}', $4)`,
        [hash(), app.applicationId, userId, later],
      ],
      oauth_refresh_tokens: [
        `INSERT INTO oauth_refresh_tokens (id, token_hash, family_id, application_id, user_id, scopes, auth_time, created_at, expires_at, family_expires_at)
         VALUES ($1, $2, $1, $3, $4, '{api}', $5, $5, $6, $6)`,
        [id, hash(), app.applicationId, userId, t.clock.now(), later],
      ],
      oauth_device_authorizations: [
        `INSERT INTO oauth_device_authorizations (device_code_hash, user_code_hash, application_id, scopes, interval_seconds, expires_at)
         VALUES ($1, $2, $3, '{api}', 5, $4)`,
        [hash(), hash(), app.applicationId, later],
      ],
    };
    await db.query(...statements[table]!);
  }

  it('deletes an unclaimed application nobody used once older than the TTL, and keeps a younger one', async () => {
    const old = await registerUnclaimed();
    t.clock.advance(ttl() / 2);
    const young = await registerUnclaimed();
    t.clock.advance(ttl() / 2 + 1000);
    expect(await unknownCodeError(t.url, old.clientId, old.clientSecret)).toBe('invalid_grant'); // known, and cached

    expect((await t.get(HousekeepingService).run())?.unclaimedApplications).toBe(1);
    expect(await exists(old)).toBe(false);
    expect(await exists(young)).toBe(true);
    // The client must register again: the token endpoint no longer knows it, cached or not.
    expect(await unknownCodeError(t.url, old.clientId, old.clientSecret)).toBe('invalid_client');
    expect(await unknownCodeError(t.url, young.clientId, young.clientSecret)).toBe('invalid_grant');

    t.clock.advance(ttl() / 2);
    expect((await t.get(HousekeepingService).run())?.unclaimedApplications).toBe(1);
    expect(await exists(young)).toBe(false);
  });

  it('keeps an unclaimed application that a grant, code, access or refresh token or device authorization names', async () => {
    const user = await createUser(t);
    const tables = [
      'oauth_grants',
      'oauth_authorization_codes',
      'oauth_access_tokens',
      'oauth_refresh_tokens',
      'oauth_device_authorizations',
    ];
    const used = new Map<string, RegisteredApp>();
    for (const table of tables) {
      const app = await registerUnclaimed();
      await useOnlyIn(table, app, user.id);
      used.set(table, app);
    }
    const unused = await registerUnclaimed();
    t.clock.advance(ttl() + 1000);

    expect((await t.get(HousekeepingService).run())?.unclaimedApplications).toBe(1);
    expect(await exists(unused)).toBe(false);
    for (const [table, app] of used) expect([table, await exists(app)]).toEqual([table, true]);
  });

  it('counts an application as unused once its last code has expired and been purged, in the same run', async () => {
    const user = await createUser(t);
    const app = await registerUnclaimed();
    await issueCode(t, app, user.id);
    t.clock.advance(ttl() + 1000);
    expect(await t.get(HousekeepingService).run()).toMatchObject({ codes: 0, unclaimedApplications: 0 });
    expect(await exists(app)).toBe(true);

    t.clock.advance(86_400_000); // a day past the code's expiry, when housekeeping deletes it
    expect(await t.get(HousekeepingService).run()).toMatchObject({ codes: 1, unclaimedApplications: 1 });
    expect(await exists(app)).toBe(false);
  });

  it('never deletes a claimed application or one registered in the dashboard', async () => {
    const owner = await createUser(t);
    const claimed = await registerUnclaimed();
    await t.get(ApplicationsService).claim(claimed.applicationId, owner.id);
    const dashboard = await registerApp(t, owner.id);
    t.clock.advance(ttl() + 1000);

    expect((await t.get(HousekeepingService).run())?.unclaimedApplications).toBe(0);
    expect(await exists(claimed)).toBe(true);
    expect(await exists(dashboard)).toBe(true);
  });

  it('opens registration again when the cap was reached and housekeeping deletes the unused applications', async () => {
    const db = t.get(DataSource);
    const fillers = t.config.oauth.unclaimedApplicationsMax - (await t.get(ApplicationsService).countUnclaimed());
    await db.query(
      `INSERT INTO oauth_applications (name, client_id, client_type, redirect_uris, scopes, created_at)
       SELECT 'Filler ' || i, 'filler-' || i, 'public', ARRAY[$1], '{api}', $2 FROM generate_series(1, $3) AS i`,
      [REDIRECT_URI, t.clock.now(), fillers],
    );
    expect(await registerUnclaimed()).toMatchObject({ status: 503 });

    t.clock.advance(ttl() + 1000);
    const purged = await t.get(HousekeepingService).runIfDue();
    expect(purged?.unclaimedApplications).toBe(fillers);
    expect(t.logs.filter((line) => String(line.msg).startsWith('Housekeeping ran')).at(-1)?.msg).toMatch(
      new RegExp(`^Housekeeping ran: .*, ${fillers} unclaimed applications$`),
    );
    expect(await count('oauth_applications WHERE owner_id IS NULL')).toBeLessThan(t.config.oauth.unclaimedApplicationsMax);
    expect(await registerUnclaimed()).toMatchObject({ status: 201 });
  });
});

it('works through a backlog larger than one purge statement deletes, in batches', async () => {
  const user = await createUser(t);
  const backlog = PURGE_BATCH_SIZE * 2 + 1;
  const expired = new Date(t.clock.now().getTime() - 1000);
  await t.get(DataSource).query(
    `INSERT INTO sessions (token_hash, user_id, auth_time, expires_at)
       SELECT encode(sha256(('backlog-' || n)::bytea), 'hex'), $1, $2, $2 FROM generate_series(1, $3) AS n`,
    [user.id, expired, backlog],
  );
  const logger = t.get(DataSource).logger;
  const original = logger.logQuery.bind(logger);
  const deletes: string[] = [];
  logger.logQuery = (sql, ...rest) => {
    if (/DELETE FROM sessions/.test(sql)) deletes.push(sql);
    return original(sql, ...rest);
  };
  try {
    const purged = await t.get(HousekeepingService).run();
    expect(purged?.sessions).toBe(backlog);
  } finally {
    logger.logQuery = original;
  }
  // Three statements of at most a batch each (the last one finds a single row), never one for them all.
  expect(deletes).toHaveLength(3);
  expect(await count(`sessions WHERE user_id = '${user.id}'`)).toBe(0);
});

describe('known browsers', () => {
  it('forgets browsers unseen for a year, but never a user’s most recent one', async () => {
    const data = t.get(DataSource);
    const [away, back] = [await createUser(t), await createUser(t)];
    const insert = (userId: string, device: string, daysAgo: number) =>
      data.query(
        `INSERT INTO known_browsers (user_id, device_hash, browser, first_seen_at, last_seen_at)
         VALUES ($1, encode(sha256($2::bytea), 'hex'), 'Firefox on Linux', $3, $3)`,
        [userId, device, new Date(t.clock.now().getTime() - daysAgo * 24 * 3_600_000)],
      );
    await insert(away.id, 'old laptop', 500);
    await insert(away.id, 'old phone', 400);
    await insert(back.id, 'old laptop', 500);
    await insert(back.id, 'new laptop', 10);

    expect((await t.get(HousekeepingService).run())?.knownBrowsers).toBe(2);
    const left = (await data.query(`SELECT user_id FROM known_browsers WHERE user_id = ANY($1) ORDER BY last_seen_at`, [
      [away.id, back.id],
    ])) as { user_id: string }[];
    expect(left.map((row) => row.user_id)).toEqual([away.id, back.id]);
  });
});
