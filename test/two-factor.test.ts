import { createHash } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { DataSource } from 'typeorm';
import { SessionsService } from '../src/sessions/sessions.service.js';
import { PENDING_SIGN_IN_MAX_FAILURES, PENDING_SIGN_IN_TTL_MS } from '../src/sessions/sign-in-steps.js';
import { SECOND_STEP_LIMITS } from '../src/sessions/attempt-throttle.js';
import { TotpService } from '../src/two-factor/totp.service.js';
import type { User } from '../src/users/user.model.js';
import { SecondFactors } from '../src/users/second-factors.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { serverUrl } from './support/database.js';
import { runCliWithInput } from './support/processes.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { startTestApp, TestApp } from './support/test-app.js';

const QUEUE_THE_BURST = { DATABASE_POOL_WAIT_TIMEOUT_MS: '20000' };

// On PostgreSQL a second instance shares the database (the concurrency test spreads its burst over both);
// the embedded database opens in one process only, so there it is the same instance.
let t: TestApp;
let second: TestApp;
beforeAll(async () => {
  t = await startTestApp(QUEUE_THE_BURST);
  // Both instances know the site by one address (BASE_URL), as behind a load balancer: forms posted to either pass the origin check.
  second = serverUrl() ? await startTestApp({ ...QUEUE_THE_BURST, BASE_URL: t.url }, { databaseEnv: t.databaseEnv }) : t;
});
afterAll(async () => {
  if (second !== t) await second.close();
  await t.close();
});

/** Moves every instance's clock (they must agree for the throttle's windows). */
function advance(ms: number): void {
  for (const app of new Set([t, second])) app.clock.advance(ms);
}

const WINDOW_MS = 15 * 60_000 + 1000;

/**
 * Moves the clocks to the start of the next 30-second step (one second in), so that a test has the rest
 * of the step before a code it computed turns into another one.
 */
function nextStep(): void {
  advance(30_000 - (t.clock.now().getTime() % 30_000) + 1000);
}

/** The code an authenticator app shows now (by the app's clock), or `steps` 30-second steps later. */
function codeFor(secret: string, steps = 0): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: t.clock.now().getTime() + steps * 30_000 });
}

/** A user with TOTP on (set up through the service); the code that confirmed it is used up. */
async function userWithTotp(): Promise<{ user: User; secret: string; recoveryCodes: string[] }> {
  const user = await createUser(t);
  const totp = t.get(TotpService);
  await totp.startEnrolment(user.id);
  const { secret } = (await totp.enrolment(user.id, user.username))!;
  const recoveryCodes = (await totp.confirm(user.id, codeFor(secret)))!;
  nextStep(); // the next code is a new one
  return { user, secret, recoveryCodes };
}

/** Signs in with the password; expects the redirect to the second step. */
async function passwordStep(browser: Browser, user: User, returnTo = '/'): Promise<Record<string, string>> {
  const res = await signIn(browser, user.username, TEST_PASSWORD, returnTo);
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe('/sign-in/second-factor');
  const page = await browser.get('/sign-in/second-factor');
  expect(page.status).toBe(200);
  return formFields(await page.text());
}

async function sessionOf(browser: Browser) {
  return t.get(SessionsService).resolve(browser.cookie('agora_session'));
}

async function notices(userId: string, kind: string): Promise<Record<string, unknown>[]> {
  const rows = (await t
    .get(DataSource)
    .query(`SELECT data FROM pgboss.job WHERE name = 'security-notices' AND data->>'userId' = $1 AND data->'notice'->>'kind' = $2`, [
      userId,
      kind,
    ])) as { data: { notice: Record<string, unknown> } }[];
  return rows.map((row) => row.data.notice);
}

describe('signing in with a second factor', () => {
  it('after the right password, gives a pending sign-in and no session', async () => {
    const { user } = await userWithTotp();
    const browser = new Browser(t.url);
    await passwordStep(browser, user);
    expect(browser.cookie('agora_session')).toBeUndefined();
    expect(browser.cookie('agora_pending_sign_in')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The dashboard still wants a sign-in.
    expect((await browser.get('/account/security')).status).toBe(303);
  });

  it('offers the code field with the one-time-code hints and a way to a recovery code', async () => {
    const { user } = await userWithTotp();
    const browser = new Browser(t.url);
    await passwordStep(browser, user);
    const html = await (await browser.get('/sign-in/second-factor')).text();
    expect(html).toMatch(/<input[^>]*id="code"[^>]*inputmode="numeric"[^>]*autocomplete="one-time-code"/s);
    expect(html).toContain('href="/sign-in/second-factor?method=recovery"');
    const recovery = await (await browser.get('/sign-in/second-factor?method=recovery')).text();
    expect(recovery).toContain('id="recovery-code"');
  });

  it('signs in with a code from the app: the session records pwd, otp and mfa, and goes where it was going', async () => {
    const { user, secret } = await userWithTotp();
    const browser = new Browser(t.url);
    const fields = await passwordStep(browser, user, '/account');
    const done = await browser.post('/sign-in/second-factor', { ...fields, code: codeFor(secret) });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/account');
    expect(browser.cookie('agora_pending_sign_in')).toBeUndefined();
    const session = await sessionOf(browser);
    expect(session?.user.id).toBe(user.id);
    expect(session?.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect((await browser.get('/account/security')).status).toBe(200);
  });

  it('refuses a code that was already used, even within its 30 seconds', async () => {
    const { user, secret } = await userWithTotp();
    const first = new Browser(t.url);
    const code = codeFor(secret);
    expect((await first.post('/sign-in/second-factor', { ...(await passwordStep(first, user)), code })).status).toBe(303);

    const second = new Browser(t.url);
    const refused = await second.post('/sign-in/second-factor', { ...(await passwordStep(second, user)), code });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('This code was already used. Wait for the next one.');
    expect(second.cookie('agora_session')).toBeUndefined();

    nextStep();
    expect(
      (
        await second.post('/sign-in/second-factor', {
          ...formFields(await (await second.get('/sign-in/second-factor')).text()),
          code: codeFor(secret),
        })
      ).status,
    ).toBe(303);
  });

  it('lets only one of two concurrent uses of one code through', async () => {
    const { user, secret } = await userWithTotp();
    const browsers = [new Browser(t.url), new Browser(t.url)];
    const forms = await Promise.all(browsers.map((b) => passwordStep(b, user)));
    const code = codeFor(secret);
    const statuses = await Promise.all(
      browsers.map((b, i) => b.post('/sign-in/second-factor', { ...forms[i]!, code }).then((r) => r.status)),
    );
    expect(statuses.sort()).toEqual([303, 422]);
  });

  it('accepts a code of the previous or the next step (a phone clock a little off), not two steps away', async () => {
    const { user, secret } = await userWithTotp();
    const browser = new Browser(t.url);
    const fields = await passwordStep(browser, user);
    expect((await browser.post('/sign-in/second-factor', { ...fields, code: codeFor(secret, 2) })).status).toBe(422);
    expect((await browser.post('/sign-in/second-factor', { ...fields, code: codeFor(secret, 1) })).status).toBe(303);
  });

  it('signs in with a recovery code once; the same code is refused the next time, and the user is told', async () => {
    const { user, recoveryCodes } = await userWithTotp();
    expect(recoveryCodes).toHaveLength(10);
    for (const code of recoveryCodes) expect(code).toMatch(/^[a-z0-9]{5}-[a-z0-9]{5}$/);
    const browser = new Browser(t.url);
    const fields = await passwordStep(browser, user);
    const done = await browser.post('/sign-in/second-factor', {
      ...fields,
      method: 'recovery',
      recovery_code: recoveryCodes[3]!.toUpperCase(),
    });
    expect(done.status).toBe(303);
    expect((await sessionOf(browser))?.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(await notices(user.id, 'recovery-code-used')).toEqual([{ kind: 'recovery-code-used', remaining: 9 }]);

    const again = new Browser(t.url);
    const refused = await again.post('/sign-in/second-factor', {
      ...(await passwordStep(again, user)),
      method: 'recovery',
      recovery_code: recoveryCodes[3]!,
    });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('That recovery code is not right, or it was already used.');
    expect(again.cookie('agora_session')).toBeUndefined();
  });

  it('stores recovery codes hashed, never in clear', async () => {
    const { user, recoveryCodes } = await userWithTotp();
    const dump = JSON.stringify(await t.get(DataSource).query(`SELECT * FROM recovery_codes WHERE user_id = $1`, [user.id]));
    for (const code of recoveryCodes) expect(dump).not.toContain(code);
    const secrets = JSON.stringify(await t.get(DataSource).query(`SELECT totp_secret FROM users WHERE id = $1`, [user.id]));
    expect(secrets).not.toMatch(/"[A-Z2-7]{32}"/);
  });

  it('signs a user without a second factor in with the password alone (amr pwd)', async () => {
    const user = await createUser(t);
    const browser = new Browser(t.url);
    const res = await signIn(browser, user.username, TEST_PASSWORD, '/account');
    expect(res.headers.get('location')).toBe('/account');
    expect((await sessionOf(browser))?.amr).toEqual(['pwd']);
  });

  it('holds the pending sign-in in a __Host- cookie, HttpOnly, Secure and SameSite=Lax, under https', async () => {
    const secure = await startTestApp({ BASE_URL: 'https://agora.example.com' });
    try {
      const user = await createUser(secure);
      const totp = secure.get(TotpService);
      await totp.startEnrolment(user.id);
      const { secret } = (await totp.enrolment(user.id, user.username))!;
      await totp.confirm(user.id, TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: secure.clock.now().getTime() }));
      const browser = new Browser(secure.url, 'https://agora.example.com');
      const form = formFields(await (await browser.get('/sign-in')).text());
      // The test's client keeps cookies by name; a real browser sends __Host- cookies back to https only.
      const res = await browser.post('/sign-in', { ...form, login: user.username, password: TEST_PASSWORD });
      expect(res.headers.get('location')).toBe('/sign-in/second-factor');
      const pending = res.headers.getSetCookie().find((c) => c.startsWith('__Host-agora_pending_sign_in='))!;
      expect(pending).toMatch(/HttpOnly/i);
      expect(pending).toMatch(/Secure/i);
      expect(pending).toMatch(/SameSite=Lax/i);
      expect(pending).toMatch(/Path=\//);
      expect(pending).not.toMatch(/Domain=/i);
      expect(res.headers.getSetCookie().some((c) => /agora_session=/.test(c))).toBe(false);
    } finally {
      await secure.close();
    }
  });

  it(`ends a pending sign-in after ${PENDING_SIGN_IN_TTL_MS / 60_000} minutes: back to the password`, async () => {
    const { user, secret } = await userWithTotp();
    const browser = new Browser(t.url);
    const fields = await passwordStep(browser, user);
    advance(PENDING_SIGN_IN_TTL_MS + 1000);
    const late = await browser.post('/sign-in/second-factor', { ...fields, code: codeFor(secret) });
    expect(late.status).toBe(303);
    expect(late.headers.get('location')).toBe('/sign-in?return_to=%2F');
    expect(browser.cookie('agora_session')).toBeUndefined();
    expect(browser.cookie('agora_pending_sign_in')).toBeUndefined();
    expect(await (await browser.get('/sign-in?return_to=%2F')).text()).toContain('Your sign-in expired. Please sign in again.');
  });

  it(`ends a pending sign-in after ${PENDING_SIGN_IN_MAX_FAILURES} wrong codes`, async () => {
    advance(WINDOW_MS);
    const { user, secret } = await userWithTotp();
    const browser = new Browser(t.url);
    const fields = await passwordStep(browser, user);
    for (let i = 1; i < PENDING_SIGN_IN_MAX_FAILURES; i++)
      expect((await browser.post('/sign-in/second-factor', { ...fields, code: wrongCode(secret) })).status).toBe(422);
    const last = await browser.post('/sign-in/second-factor', { ...fields, code: wrongCode(secret) });
    expect(last.status).toBe(303);
    expect(last.headers.get('location')).toMatch(/^\/sign-in\?/);
    expect((await browser.post('/sign-in/second-factor', { ...fields, code: codeFor(secret) })).headers.get('location')).toMatch(
      /^\/sign-in/,
    );
    expect(browser.cookie('agora_session')).toBeUndefined();
  });
});

/** A six-digit code that is none of the three the window accepts. */
function wrongCode(secret: string): string {
  const live = new Set([-1, 0, 1].map((s) => codeFor(secret, s)));
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, '0');
    if (!live.has(code)) return code;
  }
}

describe('recovery codes at rest', () => {
  it('keeps a keyed digest of each code (HMAC under SECRET_KEY), not a hash a copy of the database could be searched with', async () => {
    const { user, recoveryCodes } = await userWithTotp();
    const stored = (
      (await t.get(DataSource).query('SELECT code_hash FROM recovery_codes WHERE user_id = $1', [user.id])) as { code_hash: string }[]
    ).map((row) => row.code_hash);
    expect(stored).toHaveLength(10);
    for (const code of recoveryCodes) {
      expect(stored).not.toContain(createHash('sha256').update(code).digest('hex'));
      expect(stored).not.toContain(code);
    }
  });
});

describe('second-step throttling', () => {
  it(`answers 429 with Retry-After after ${SECOND_STEP_LIMITS.user} wrong codes for one account, even to the right code`, async () => {
    advance(WINDOW_MS);
    const { user, secret } = await userWithTotp();
    for (let i = 0; i < SECOND_STEP_LIMITS.user; i += 2) {
      const browser = new Browser(t.url);
      const fields = await passwordStep(browser, user);
      for (let j = 0; j < 2; j++)
        expect((await browser.post('/sign-in/second-factor', { ...fields, code: wrongCode(secret) })).status).toBe(422);
    }
    const browser = new Browser(t.url);
    const fields = await passwordStep(browser, user);
    const throttled = await browser.post('/sign-in/second-factor', { ...fields, code: codeFor(secret) });
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await throttled.text()).toContain('Too many incorrect codes. Try again in 15 minutes.');
    expect(browser.cookie('agora_session')).toBeUndefined();

    advance(WINDOW_MS);
    const again = new Browser(t.url);
    expect((await again.post('/sign-in/second-factor', { ...(await passwordStep(again, user)), code: codeFor(secret) })).status).toBe(303);
  });

  it('takes back the count of a right code', async () => {
    advance(WINDOW_MS);
    const { user, secret } = await userWithTotp();
    for (let i = 0; i < SECOND_STEP_LIMITS.user + 2; i++) {
      const browser = new Browser(t.url);
      expect((await browser.post('/sign-in/second-factor', { ...(await passwordStep(browser, user)), code: codeFor(secret) })).status).toBe(
        303,
      );
      nextStep();
    }
  });
});

describe('second-step throttling under concurrency', () => {
  it(`checks at most ${SECOND_STEP_LIMITS.user} of 100 simultaneous wrong codes for one account, over two instances, and answers 429 to the rest`, async () => {
    advance(WINDOW_MS);
    const { user, secret } = await userWithTotp();
    const browsers: { browser: Browser; fields: Record<string, string> }[] = [];
    for (let i = 0; i < 20; i++) {
      const browser = new Browser(t.url);
      browsers.push({ browser, fields: await passwordStep(browser, user) });
    }
    const statuses = await Promise.all(
      Array.from({ length: 100 }, async (_, n) => {
        const { browser, fields } = browsers[n % browsers.length]!;
        const res = await browser.at([t, second][n % 2]!.url).post('/sign-in/second-factor', { ...fields, code: wrongCode(secret) });
        await res.arrayBuffer();
        return res.status;
      }),
    );
    const counted = statuses.filter((status) => status !== 429);
    expect(statuses.filter((status) => ![422, 303, 429].includes(status))).toEqual([]);
    expect(counted.length).toBeLessThanOrEqual(SECOND_STEP_LIMITS.user);
    expect(counted.every((status) => status === 422 || status === 303)).toBe(true);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(100 - SECOND_STEP_LIMITS.user);

    const late = new Browser(t.url);
    expect((await late.post('/sign-in/second-factor', { ...(await passwordStep(late, user)), code: codeFor(secret) })).status).toBe(429);
    for (const { browser } of browsers) expect(browser.cookie('agora_session')).toBeUndefined();
  }, 120_000);
});

/** Signs in (password, and the code when the user has TOTP) and returns the browser. */
async function signedIn(user: User, secret?: string): Promise<Browser> {
  const browser = new Browser(t.url);
  if (!secret) {
    expect((await signIn(browser, user.username, TEST_PASSWORD)).status).toBe(303);
    return browser;
  }
  const fields = await passwordStep(browser, user);
  expect((await browser.post('/sign-in/second-factor', { ...fields, code: codeFor(secret) })).status).toBe(303);
  nextStep();
  return browser;
}

/** The form fields (CSRF token included) of a page. */
async function fieldsOf(browser: Browser, path: string): Promise<Record<string, string>> {
  const res = await browser.get(path);
  expect(res.status).toBe(200);
  return formFields(await res.text());
}

describe('setting up the authenticator app on the security page', () => {
  it('needs a code from the app and the password, then shows ten recovery codes once', async () => {
    advance(WINDOW_MS);
    const user = await createUser(t);
    const browser = await signedIn(user);
    const security = await (await browser.get('/account/security')).text();
    expect(security).toContain('Two-factor authentication');
    expect(security).toContain('Set up authenticator app');

    const started = await browser.post('/account/two-factor/totp/start', formFields(security));
    expect(started.status).toBe(303);
    expect(started.headers.get('location')).toBe('/account/two-factor/totp');
    const enrolment = await (await browser.get('/account/two-factor/totp')).text();
    expect(enrolment).toMatch(/<img class="qr" src="data:image\/svg\+xml;base64,/);
    const secret = /id="totp-secret" class="secret">([A-Z2-7 ]+)</.exec(enrolment)![1]!.replace(/ /g, '');
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);

    const noPassword = await browser.post('/account/two-factor/totp', {
      ...formFields(enrolment),
      code: codeFor(secret),
      current_password: 'not-it',
    });
    expect(noPassword.status).toBe(422);
    expect(await noPassword.text()).toMatch(/id="current-password-error"[^>]*>Current password is incorrect/);
    const wrong = await browser.post('/account/two-factor/totp', {
      ...formFields(enrolment),
      code: wrongCode(secret),
      current_password: TEST_PASSWORD,
    });
    expect(wrong.status).toBe(422);
    expect(await wrong.text()).toMatch(/id="code-error"[^>]*>That code is not right/);
    expect((await t.get(SecondFactors).of(user.id)).totp).toBe(false);

    const confirmedWith = codeFor(secret);
    const { posted, html } = await browser.submit('/account/two-factor/totp', {
      ...formFields(enrolment),
      code: confirmedWith,
      current_password: TEST_PASSWORD,
    });
    expect(posted.headers.get('location')).toBe('/account/two-factor/recovery-codes');
    const codes = [...html.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]!);
    expect(codes).toHaveLength(10);
    expect(html).toContain('They will not be shown again.');
    const again = await (await browser.get('/account/two-factor/recovery-codes')).text();
    expect(again).not.toContain(codes[0]);
    expect(again).toContain('You have 10 of 10 recovery codes left.');

    expect(await t.get(SecondFactors).of(user.id)).toEqual({ totp: true, passkeys: 0, recoveryCodesLeft: 10 });
    expect(await notices(user.id, 'second-factor-enabled')).toEqual([{ kind: 'second-factor-enabled', method: 'totp' }]);
    expect(await (await browser.get('/account/security')).text()).toContain('Turn off…');

    // The code that confirmed it cannot sign in; the next one can, with a recovery code as well.
    const next = new Browser(t.url);
    const fields = await passwordStep(next, user);
    expect((await next.post('/sign-in/second-factor', { ...fields, code: confirmedWith })).status).toBe(422);
    nextStep();
    expect((await next.post('/sign-in/second-factor', { ...fields, code: codeFor(secret) })).status).toBe(303);
  });

  it('starts again with a new secret when asked again before confirming', async () => {
    const user = await createUser(t);
    const browser = await signedIn(user);
    const secretOf = async () =>
      /id="totp-secret" class="secret">([A-Z2-7 ]+)</.exec(await (await browser.get('/account/two-factor/totp')).text())![1];
    await browser.post('/account/two-factor/totp/start', await fieldsOf(browser, '/account/security'));
    const first = await secretOf();
    await browser.post('/account/two-factor/totp/start', await fieldsOf(browser, '/account/security'));
    expect(await secretOf()).not.toBe(first);
    expect((await t.get(SecondFactors).of(user.id)).totp).toBe(false);
  });
});

describe('turning the authenticator app off, and new recovery codes', () => {
  it('needs the current password to turn it off; the recovery codes go with the last second factor', async () => {
    advance(WINDOW_MS);
    const { user, secret } = await userWithTotp();
    const browser = await signedIn(user, secret);
    const form = await fieldsOf(browser, '/account/two-factor/disable');
    const wrong = await browser.post('/account/two-factor/disable', { ...form, current_password: 'not-the-password' });
    expect(wrong.status).toBe(422);
    expect(await wrong.text()).toMatch(/id="current-password-error"[^>]*>Current password is incorrect/);
    expect((await t.get(SecondFactors).of(user.id)).totp).toBe(true);

    const { posted, html } = await browser.submit('/account/two-factor/disable', { ...form, current_password: TEST_PASSWORD });
    expect(posted.headers.get('location')).toBe('/account/security');
    expect(html).toContain('Two-factor authentication with an app is off.');
    expect(await t.get(SecondFactors).of(user.id)).toEqual({ totp: false, passkeys: 0, recoveryCodesLeft: 0 });
    expect(await notices(user.id, 'second-factor-disabled')).toEqual([{ kind: 'second-factor-disabled', method: 'totp' }]);
    const plain = new Browser(t.url);
    expect((await signIn(plain, user.username, TEST_PASSWORD)).headers.get('location')).toBe('/');
    expect((await sessionOf(plain))?.amr).toEqual(['pwd']);
  });

  it('makes ten new recovery codes with the current password: the old ones stop working', async () => {
    advance(WINDOW_MS);
    const { user, secret, recoveryCodes: old } = await userWithTotp();
    const browser = await signedIn(user, secret);
    const form = await fieldsOf(browser, '/account/two-factor/recovery-codes');
    expect((await browser.post('/account/two-factor/recovery-codes', { ...form, current_password: 'not-the-password' })).status).toBe(422);
    const { posted, html } = await browser.submit('/account/two-factor/recovery-codes', { ...form, current_password: TEST_PASSWORD });
    expect(posted.headers.get('location')).toBe('/account/two-factor/recovery-codes');
    const fresh = [...html.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]!);
    expect(fresh).toHaveLength(10);
    expect(fresh.filter((code) => old.includes(code))).toEqual([]);
    expect(await notices(user.id, 'recovery-codes-regenerated')).toEqual([{ kind: 'recovery-codes-regenerated' }]);

    const withOld = new Browser(t.url);
    const fields = await passwordStep(withOld, user);
    expect((await withOld.post('/sign-in/second-factor', { ...fields, method: 'recovery', recovery_code: old[0]! })).status).toBe(422);
    expect((await withOld.post('/sign-in/second-factor', { ...fields, method: 'recovery', recovery_code: fresh[0]! })).status).toBe(303);
  });
});

describe('step-up of a signed-in session', () => {
  it('asks a session signed in with the password alone for the code, then records otp and mfa and a new auth_time', async () => {
    advance(WINDOW_MS);
    const user = await createUser(t);
    const browser = await signedIn(user);
    const before = (await sessionOf(browser))!;
    const totp = t.get(TotpService);
    await totp.startEnrolment(user.id);
    const { secret } = (await totp.enrolment(user.id, user.username))!;
    await totp.confirm(user.id, codeFor(secret));
    advance(60_000);
    nextStep();

    const start = await browser.get('/sign-in/second-factor?return_to=%2Faccount%3Ftab%3D1');
    expect(start.status).toBe(303);
    expect(start.headers.get('location')).toBe('/sign-in/second-factor');
    const page = await browser.get('/sign-in/second-factor');
    const html = await page.text();
    expect(html).toContain('asks you to confirm it is you with your second factor');
    const done = await browser.post('/sign-in/second-factor', { ...formFields(html), code: codeFor(secret) });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/account?tab=1');

    const after = (await sessionOf(browser))!;
    expect(after.sessionId).toBe(before.sessionId);
    expect(after.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(after.authTime.getTime()).toBeGreaterThan(before.authTime.getTime() + 59_000);
    // Now it has what was asked: straight through.
    expect((await browser.get('/sign-in/second-factor?return_to=%2Faccount')).headers.get('location')).toBe('/account');
  });

  it('sends a signed-out browser to the password, keeps return_to local, and tells a user without a second factor', async () => {
    const anonymous = await new Browser(t.url).get('/sign-in/second-factor?return_to=https%3A%2F%2Fevil.example%2F');
    expect(anonymous.headers.get('location')).toBe('/sign-in?return_to=%2F');
    const browser = await signedIn(await createUser(t));
    const none = await browser.get('/sign-in/second-factor?return_to=%2Faccount');
    expect(none.status).toBe(403);
    expect(await none.text()).toContain('Two-factor authentication is not set up');
  });

  it('offers only a passkey when one is required, and refuses a code', async () => {
    const user = await createUser(t);
    const browser = await signedIn(user);
    const totp = t.get(TotpService);
    await totp.startEnrolment(user.id);
    const { secret } = (await totp.enrolment(user.id, user.username))!;
    await totp.confirm(user.id, codeFor(secret));
    nextStep();
    await browser.get('/sign-in/second-factor?return_to=%2Faccount&require=phr');
    const html = await (await browser.get('/sign-in/second-factor')).text();
    expect(html).toContain('You have no passkey yet.');
    expect(html).not.toContain('id="code"');
    const refused = await browser.post('/sign-in/second-factor', { ...formFields(html), code: codeFor(secret) });
    expect(refused.status).toBe(422);
    expect((await sessionOf(browser))?.amr).toEqual(['pwd']);
  });
});

describe('a new password ends the sign-ins waiting for their second step', () => {
  /** A browser signed in with the password and a code; the next code is a new one. */
  async function fullySignedIn(user: User, secret: string): Promise<Browser> {
    const browser = new Browser(t.url);
    const fields = await passwordStep(browser, user);
    expect((await browser.post('/sign-in/second-factor', { ...fields, code: codeFor(secret) })).status).toBe(303);
    nextStep();
    return browser;
  }

  /** The right, unused code, posted to a sign-in begun with the old password: sent back to the password, no session. */
  async function expectEnded(browser: Browser, fields: Record<string, string>, user: User, secret: string): Promise<void> {
    const res = await browser.post('/sign-in/second-factor', { ...fields, code: codeFor(secret) });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/sign-in?return_to=%2F');
    expect(browser.cookie('agora_session')).toBeUndefined();
    expect(await sessionOf(browser)).toBeNull();
    expect(await t.get(DataSource).query('SELECT id FROM pending_sign_ins WHERE user_id = $1', [user.id])).toEqual([]);
  }

  it('on the security page: the right code no longer finishes a sign-in begun with the old password', async () => {
    const { user, secret } = await userWithTotp();
    const here = await fullySignedIn(user, secret);
    const waiting = new Browser(t.url);
    const fields = await passwordStep(waiting, user);
    const { _csrf } = formFields(await (await here.get('/account/security')).text());
    const changed = await here.post('/account/password', {
      _csrf: _csrf!,
      current_password: TEST_PASSWORD,
      new_password: 'a-much-better-passphrase',
    });
    expect(changed.status).toBe(303);
    await expectEnded(waiting, fields, user, secret);
    expect((await here.get('/account')).status).toBe(200);
  });

  it('by an operator (users:set-password): the right code no longer finishes it, and the user is told', async () => {
    const { user, secret } = await userWithTotp();
    const waiting = new Browser(t.url);
    const fields = await passwordStep(waiting, user);
    const set = await runCliWithInput(
      t.databaseEnv,
      'a-brand-new-passphrase\n',
      'users:set-password',
      '--user',
      user.username,
      '--password-stdin',
    );
    expect(set.stderr).toBe('');
    await expectEnded(waiting, fields, user, secret);
    expect(await notices(user.id, 'password-changed')).toEqual([{ kind: 'password-changed' }]);
  });
});
