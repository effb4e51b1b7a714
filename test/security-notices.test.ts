import type { ParsedMail } from 'mailparser';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { SecurityNotices, type SecurityNotice } from '../src/security-notices/security-notices.js';
import { UsersService } from '../src/users/users.service.js';
import { Browser, formFields } from './support/browser.js';
import { createUser, createUserWithToken, TEST_PASSWORD } from './support/fixtures.js';
import { approveInBrowser, authorizationRequest, discover, newUserAndApp } from './support/oauth.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';
import { startTestApp, TestApp } from './support/test-app.js';
import { eventually } from './support/eventually.js';
import { queuesSettled } from './support/job-queue.js';

// What a user hears about their account's security, end to end: the change, the job, the mail in a real SMTP server.

let smtp: TestSmtpServer;
let t: TestApp;

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestApp({ SMTP_URL: smtp.url, MAIL_FROM: 'Agora <agora@agora.test>', JOBS_RETRY_DELAY_SECONDS: '1' });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

function mailsTo(address: string): ParsedMail[] {
  return smtp.arrivals.filter((a) => a.to.includes(address)).map((a) => a.mail);
}

/** The one mail to `address` whose subject matches, once it has arrived. */
function mailTo(address: string, subject: RegExp): Promise<ParsedMail> {
  return eventually(() => {
    const found = mailsTo(address).filter((m) => subject.test(m.subject ?? ''));
    if (found.length !== 1)
      throw new Error(`${found.length} mails to ${address} match ${subject}: ${mailsTo(address).map((m) => m.subject)}`);
    return found[0]!;
  });
}

/** Lets every job queued by now run (the queue polls each second), so that "nothing arrived" means nothing was sent. */
const settle = () => queuesSettled(t.get(DataSource), ['security-notices']);

/** What every security notice is: essential (no unsubscribe), automatic, both parts, links to act on, nothing remote. */
function expectSecurityMail(mail: ParsedMail): void {
  expect(mail.headers.get('list-unsubscribe')).toBeUndefined();
  expect(mail.headers.get('auto-submitted')).toBe('auto-generated');
  expect(mail.text).toContain(`${t.url}/account/security`);
  expect(mail.text).toContain(`${t.url}/forgot-password`);
  expect(mail.html).toContain(`href="${t.url}/account/security"`);
  expect(mail.html).not.toMatch(/<img|src=|<link|url\(/i);
  expect(mail.attachments).toEqual([]);
  expect(mail.text).toMatch(/If this was not you|If you did not/);
}

async function signedIn(username: string, userAgent = FIREFOX, browser = new Browser(t.url)): Promise<Browser> {
  // reauth: the sign-in page even for a browser signed in already (its session then ends for the new one).
  const form = formFields(await (await browser.get('/sign-in?reauth=1')).text());
  const res = await browser.post('/sign-in', { ...form, login: username, password: TEST_PASSWORD }, { 'user-agent': userAgent });
  expect(res.status).toBe(303);
  return browser;
}

describe('a sign-in from a new browser', () => {
  it('tells nobody at the first sign-in of an account, once from a second browser, and never again from either', async () => {
    const user = await createUser(t);
    const laptop = await signedIn(user.username, FIREFOX);
    const device = laptop.cookie('agora_device');
    expect(device).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const phone = await signedIn(user.username, SAFARI_IPHONE);
    expect(phone.cookie('agora_device')).not.toBe(device);

    const mail = await mailTo(user.email, /New sign-in/);
    expect(mail.subject).toBe('New sign-in to your Agora account from Safari on iOS');
    expect(mail.to).toMatchObject({ value: [{ address: user.email, name: user.name }] });
    expect(mail.text).toContain('Browser: Safari on iOS');
    expect(mail.text).toContain('IP address: 127.0.0.1');
    expect(mail.text).toMatch(/When: \w+day, \w+ \d+, \d{4} at \d+:\d\d [AP]M UTC \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)/);
    expectSecurityMail(mail);

    // The same browsers again (signed out first, or over a session): nothing new to tell.
    await laptop.post('/sign-out', { _csrf: formFields(await (await laptop.get('/account/security')).text())._csrf! });
    await signedIn(user.username, FIREFOX, laptop);
    await signedIn(user.username, SAFARI_IPHONE, phone);
    await settle();
    expect(mailsTo(user.email).map((m) => m.subject)).toEqual(['New sign-in to your Agora account from Safari on iOS']);
  });

  it('sets the device cookie HttpOnly and SameSite=Lax for a long time, and stores only its hash', async () => {
    const user = await createUser(t);
    const browser = new Browser(t.url);
    const form = formFields(await (await browser.get('/sign-in')).text());
    const res = await browser.post('/sign-in', { ...form, login: user.username, password: TEST_PASSWORD });
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('agora_device='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\//);
    const expires = new Date(/Expires=([^;]+)/i.exec(cookie)![1]!);
    expect(expires.getTime() - Date.now()).toBeGreaterThan(390 * 24 * 3_600_000);
    const rows = (await t.get(DataSource).query('SELECT device_hash, browser FROM known_browsers WHERE user_id = $1', [user.id])) as {
      device_hash: string;
      browser: string;
    }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]!.device_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0]!.device_hash).not.toContain(browser.cookie('agora_device'));
  });

  it('tells nothing at the first sign-in after sign-up, and tells of the next new browser', async () => {
    const suffix = randomBytes(4).toString('hex');
    const email = `new-${suffix}@example.com`;
    const browser = new Browser(t.url);
    const form = formFields(await (await browser.get('/sign-up')).text());
    const res = await browser.post('/sign-up', {
      ...form,
      username: `new-${suffix}`,
      email,
      name: 'New Person',
      password: TEST_PASSWORD,
    });
    expect(res.status).toBe(303);
    // Sign-up signs no one in (docs/account-security.md): the first sign-in is the account's first browser.
    await signedIn(`new-${suffix}`, FIREFOX, browser);
    await settle();
    expect(mailsTo(email).filter((m) => /New sign-in/.test(m.subject ?? ''))).toHaveLength(0);
    await signedIn(`new-${suffix}`, SAFARI_IPHONE);
    await mailTo(email, /New sign-in/);
    await settle();
    expect(mailsTo(email).filter((m) => /New sign-in/.test(m.subject ?? ''))).toHaveLength(1);
  });

  it('tells of an account that was already signed in elsewhere before browsers were remembered', async () => {
    const user = await createUser(t);
    await signedIn(user.username);
    await t.get(DataSource).query('DELETE FROM known_browsers WHERE user_id = $1', [user.id]); // as before the upgrade
    await signedIn(user.username, SAFARI_IPHONE);
    await mailTo(user.email, /New sign-in/);
  });

  it('remembers at most 50 browsers per user, the most recently used', async () => {
    const user = await createUser(t);
    const data = t.get(DataSource);
    await signedIn(user.username);
    await data.query(
      `INSERT INTO known_browsers (user_id, device_hash, browser, first_seen_at, last_seen_at)
       SELECT $1, encode(sha256(i::text::bytea), 'hex'), 'Old', now() - interval '1 day', now() - make_interval(days => i) FROM generate_series(1, 60) AS i`,
      [user.id],
    );
    await signedIn(user.username, SAFARI_IPHONE);
    const [{ count }] = (await data.query('SELECT count(*)::int AS count FROM known_browsers WHERE user_id = $1', [user.id])) as [
      { count: number },
    ];
    expect(count).toBe(50);
    const [{ kept }] = (await data.query(`SELECT count(*)::int AS kept FROM known_browsers WHERE user_id = $1 AND browser <> 'Old'`, [
      user.id,
    ])) as [{ kept: number }];
    expect(kept).toBe(2);
  });
});

describe('changes to the account', () => {
  it('tells of a password changed on the security page', async () => {
    const user = await createUser(t);
    const browser = await signedIn(user.username);
    const { _csrf } = formFields(await (await browser.get('/account/security')).text());
    const res = await browser.post('/account/password', {
      _csrf: _csrf!,
      current_password: TEST_PASSWORD,
      new_password: 'a-much-better-passphrase',
    });
    expect(res.status).toBe(303);
    const mail = await mailTo(user.email, /password was changed/);
    expect(mail.subject).toBe('Your Agora password was changed');
    expectSecurityMail(mail);
  });

  it('tells of a personal access token created on the account page, with its name and access', async () => {
    const user = await createUser(t);
    const browser = await signedIn(user.username);
    const { _csrf } = formFields(await (await browser.get('/account')).text());
    const res = await browser.post('/account/tokens', { _csrf: _csrf!, name: 'deploy <bot>', scopes: 'read_api' });
    expect(res.status).toBe(303);
    const mail = await mailTo(user.email, /personal access token/);
    expect(mail.subject).toBe('A personal access token was created for your Agora account: deploy <bot>');
    expect(mail.text).toContain('Token: deploy <bot>');
    expect(mail.text).toContain('Access: read_api (Read all of your data through the API (no changes))');
    expect(mail.html).toContain('deploy &lt;bot&gt;');
    expect(mail.text).toContain(`${t.url}/account#tokens`);
    expectSecurityMail(mail);
  });

  it('tells of an application authorized, again for new scopes, and not for an approval it already had', async () => {
    const { user, app } = await newUserAndApp(t);
    const config = await discover(t, app);
    const browser = new Browser(t.url);
    await approveInBrowser(t, (await authorizationRequest(config, 'openid profile')).url, user, browser);
    const first = await mailTo(user.email, /was authorized/);
    expect(first.subject).toBe('Test Client was authorized to use your Agora account');
    expect(first.text).toContain('Access: openid (Sign you in and confirm who you are); profile (See your name and username)');
    expect(first.text).toContain(`${t.url}/account/authorized`);
    expectSecurityMail(first);

    await approveInBrowser(t, (await authorizationRequest(config, 'openid profile')).url, user, browser); // remembered: no consent
    await approveInBrowser(t, (await authorizationRequest(config, 'openid api')).url, user, browser);
    await eventually(() => expect(mailsTo(user.email).filter((m) => /was authorized/.test(m.subject ?? ''))).toHaveLength(2));
    await settle();
    const authorized = mailsTo(user.email).filter((m) => /was authorized/.test(m.subject ?? ''));
    expect(authorized).toHaveLength(2);
    expect(authorized[1]!.text).toContain('api (Read and write all of your data through the API)');
  });

  it('sends nothing for a notice written in a transaction that rolled back', async () => {
    const { user } = await createUserWithToken(t);
    await mailTo(user.email, /personal access token/); // the fixture's own token
    await expect(
      t.get(DataSource).transaction(async (tx) => {
        await t.get(SecurityNotices).notify(user.id, { kind: 'recovery-codes-regenerated' }, { tx });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await settle();
    expect(mailsTo(user.email).map((m) => m.subject)).toEqual([expect.stringMatching(/personal access token/)]);
  });
});

describe('every kind of notice', () => {
  const cases: [SecurityNotice, RegExp][] = [
    [{ kind: 'password-reset' }, /^Your Agora password was reset$/],
    [{ kind: 'second-factor-enabled', method: 'totp' }, /^Two-factor authentication is on for your Agora account$/],
    [{ kind: 'second-factor-disabled', method: 'totp' }, /^Two-factor authentication is off for your Agora account$/],
    [{ kind: 'second-factor-enabled', method: 'passkey', name: 'YubiKey 5C' }, /^A passkey was added to your Agora account$/],
    [{ kind: 'second-factor-disabled', method: 'passkey', name: 'YubiKey 5C' }, /^A passkey was removed from your Agora account$/],
    [{ kind: 'recovery-code-used', remaining: 2 }, /^A recovery code was used to sign in to your Agora account$/],
    [{ kind: 'recovery-codes-regenerated' }, /^New recovery codes for your Agora account$/],
    [{ kind: 'second-factor-reset' }, /^Your Agora two-factor authentication was reset$/],
  ];

  it.each(cases)('sends %j to the account’s address', async (notice, subject) => {
    const user = await createUser(t);
    await t.get(SecurityNotices).notify(user.id, notice);
    const mail = await mailTo(user.email, subject);
    expect(mail.to).toMatchObject({ value: [{ address: user.email }] });
    expect(mail.text).toContain(`@${user.username}`);
    expectSecurityMail(mail);
    if (notice.kind === 'recovery-code-used') expect(mail.text).toContain('Recovery codes left: 2');
    if ('name' in notice) expect(mail.text).toContain('YubiKey 5C');
  });

  it('sends a changed address’s notice to the old address, naming the new one', async () => {
    const user = await createUser(t);
    const old = user.email;
    const updated = `moved-${randomBytes(4).toString('hex')}@example.com`;
    await t.get(DataSource).query('UPDATE users SET email = $2 WHERE id = $1', [user.id, updated]);
    await t.get(SecurityNotices).notify(user.id, { kind: 'email-changed', newEmail: updated }, { to: old });
    const mail = await mailTo(old, /e-mail address of your Agora account was changed/);
    expect(mail.text).toContain(`New address: ${updated}`);
    expectSecurityMail(mail);
    await settle();
    expect(mailsTo(updated)).toEqual([]);
  });

  it('still tells a blocked user, and nobody about a deleted one', async () => {
    const blocked = await createUser(t);
    await t.get(UsersService).setState(blocked.username, 'blocked');
    await t.get(SecurityNotices).notify(blocked.id, { kind: 'password-reset' });
    await mailTo(blocked.email, /password was reset/);

    const gone = await createUser(t);
    await t.get(DataSource).query('DELETE FROM users WHERE id = $1', [gone.id]);
    await t.get(SecurityNotices).notify(gone.id, { kind: 'password-reset' });
    await settle();
    expect(mailsTo(gone.email)).toEqual([]);
    const [{ failed }] = (await t
      .get(DataSource)
      .query(`SELECT count(*)::int AS failed FROM pgboss.job WHERE name = 'security-notices' AND state = 'failed'`)) as [
      { failed: number },
    ];
    expect(failed).toBe(0);
  });
});
