import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { GrantsService } from '../src/oauth/consent/grants.service.js';
import { LINK_MAIL_LIMITS } from '../src/sessions/attempt-throttle.js';
import { followLink, mailedLink } from './support/account-links.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { registerApp } from './support/oauth.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';
import { startTestApp, TestApp } from './support/test-app.js';

/**
 * Someone who signs up with another person's address (it is not verified, so they may sign in and look
 * around) must not keep a way into the account once its owner takes it over with a password reset; and no
 * second factor can be set up on an address nobody proved (docs/account-security.md, "Password reset").
 */
let t: TestApp;
let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestApp({ SMTP_URL: smtp.url, JOBS_RETRY_DELAY_SECONDS: '1' });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

const db = () => t.get(DataSource);
const count = async (sql: string, userId: string) => ((await db().query(sql, [userId])) as { n: number }[])[0]!.n;

async function signedIn(login: string): Promise<Browser> {
  const browser = new Browser(t.url);
  expect((await signIn(browser, login, TEST_PASSWORD)).status).toBe(303);
  return browser;
}

describe('an address nobody verified', () => {
  it('cannot get a second factor: neither an authenticator app nor a passkey', async () => {
    const user = await createUser(t, { verified: false });
    const browser = await signedIn(user.username);
    const security = formFields(await (await browser.get('/account/security')).text());

    const app = await browser.post('/account/two-factor/totp/start', { _csrf: security._csrf! });
    expect(app.status).toBe(303);
    expect(app.headers.get('location')).toBe('/account/security');
    expect(await (await browser.get('/account/security')).text()).toContain(
      'Verify your e-mail address before you turn on two-factor authentication',
    );
    expect(await count('SELECT count(*)::int AS n FROM users WHERE id = $1 AND totp_secret IS NOT NULL', user.id)).toBe(0);

    const passkey = await browser.get('/account/passkeys/new');
    expect(passkey.status).toBe(303);
    expect(passkey.headers.get('location')).toBe('/account/security#passkeys');
    expect(await (await browser.get('/account/security')).text()).toContain('Verify your e-mail address before you add a passkey');
    const post = await browser.post('/account/passkeys', { _csrf: security._csrf!, name: 'Mine', credential: '{}' });
    expect(post.status).toBe(303);
    expect(post.headers.get('location')).toBe('/account/security#passkeys');
  });

  it('is claimed by its owner with a password reset: what the first holder set up goes with their password', async () => {
    t.clock.advance(LINK_MAIL_LIMITS.windowMs + 60_000);
    const squatted = await createUser(t, { verified: false });
    // What an earlier holder of the account could have left: a second factor (before second factors waited for
    // a verified address) and an application they approved, with its tokens.
    await db().query(`UPDATE users SET totp_secret = 'sealed', totp_enabled_at = now() WHERE id = $1`, [squatted.id]);
    await db().query(
      `INSERT INTO passkeys (id, user_id, credential_id, public_key, device_type, backed_up, name, created_at)
       VALUES ($1, $2, $3, '\\x00', 'multiDevice', true, 'Theirs', now())`,
      [randomUUID(), squatted.id, randomBytes(24).toString('base64url')],
    );
    await db().query(`INSERT INTO recovery_codes (id, user_id, code_hash, created_at) VALUES ($1, $2, repeat('c', 64), now())`, [
      randomUUID(),
      squatted.id,
    ]);
    const owner = await createUser(t);
    const application = await registerApp(t, owner.id, ['openid', 'api']);
    await t.get(GrantsService).remember(squatted.id, application.applicationId, ['openid', 'api']);
    expect(await t.get(GrantsService).listForUser(squatted.id)).toHaveLength(1);

    const browser = new Browser(t.url);
    const form = formFields(await (await browser.get('/forgot-password')).text());
    expect((await browser.post('/forgot-password', { ...form, email: squatted.email })).status).toBe(303);
    const link = await mailedLink(smtp, squatted.email, '/reset-password');
    expect((await followLink(browser, link, { password: 'the-real-owners-passphrase' })).status).toBe(303);

    expect(
      await count(
        'SELECT count(*)::int AS n FROM users WHERE id = $1 AND (totp_secret IS NOT NULL OR totp_enabled_at IS NOT NULL)',
        squatted.id,
      ),
    ).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM passkeys WHERE user_id = $1', squatted.id)).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM recovery_codes WHERE user_id = $1', squatted.id)).toBe(0);
    expect(await t.get(GrantsService).listForUser(squatted.id)).toHaveLength(0);
    // The address is now proved; the owner signs in with the password alone.
    expect(await count('SELECT count(*)::int AS n FROM users WHERE id = $1 AND email_verified_at IS NOT NULL', squatted.id)).toBe(1);
    const owners = new Browser(t.url);
    const signedInAgain = await signIn(owners, squatted.username, 'the-real-owners-passphrase');
    expect(signedInAgain.status).toBe(303);
    expect(signedInAgain.headers.get('location')).not.toMatch(/second-factor/);
  });

  it('a verified account keeps its second factor through a reset (the owner reset their own password)', async () => {
    t.clock.advance(LINK_MAIL_LIMITS.windowMs + 60_000);
    const user = await createUser(t);
    await db().query(`UPDATE users SET totp_secret = 'sealed', totp_enabled_at = now() WHERE id = $1`, [user.id]);
    const browser = new Browser(t.url);
    const form = formFields(await (await browser.get('/forgot-password')).text());
    expect((await browser.post('/forgot-password', { ...form, email: user.email })).status).toBe(303);
    const link = await mailedLink(smtp, user.email, '/reset-password');
    expect((await followLink(browser, link, { password: 'a-brand-new-passphrase' })).status).toBe(303);
    expect(await count('SELECT count(*)::int AS n FROM users WHERE id = $1 AND totp_enabled_at IS NOT NULL', user.id)).toBe(1);
  });
});
