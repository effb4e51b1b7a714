import { DataSource } from 'typeorm';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service.js';
import { Browser, signIn } from './support/browser.js';
import { TEST_PASSWORD } from './support/fixtures.js';
import { approveInBrowser, authorizationRequest, discover, newUserAndApp } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';
import * as client from 'openid-client';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
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

  expect(await t.get(HousekeepingService).run()).toEqual({ sessions: 0, codes: 0, accessTokens: 0, refreshTokens: 0, deviceCodes: 0 });

  // A day after the token expired, and past the session lifetime.
  t.clock.advance(t.config.sessionTtlMs + 1000);
  await signIn(new Browser(t.url), user.username, TEST_PASSWORD); // a live session to keep
  expect(await t.get(HousekeepingService).run()).toEqual({ sessions: 1, codes: 1, accessTokens: 1, refreshTokens: 0, deviceCodes: 0 });
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
  });
});
