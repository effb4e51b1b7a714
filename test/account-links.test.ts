import { Secret, TOTP } from 'otpauth';
import { DataSource } from 'typeorm';
import { LINK_MAIL_LIMITS } from '../src/sessions/attempt-throttle.js';
import { TotpService } from '../src/two-factor/totp.service.js';
import { UsersService } from '../src/users/users.service.js';
import { followLink, linksIn, mailedLink, mailsTo, securityNoticeJobs } from './support/account-links.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { eventually } from './support/eventually.js';
import { createUser, createUserWithToken, TEST_PASSWORD } from './support/fixtures.js';
import { graphql, rest } from './support/http.js';
import { queuesSettled } from './support/job-queue.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';
import { startTestApp, TestApp } from './support/test-app.js';

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
let n = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++n}`;

/** A sign-up through the page; the answer to the POST. */
async function signUp(values: { username: string; email: string; password?: string; name?: string }, browser = new Browser(t.url)) {
  const form = formFields(await (await browser.get('/sign-up')).text());
  return browser.post('/sign-up', { ...form, name: values.name ?? 'New Person', password: 'a-long-enough-passphrase', ...values });
}

async function signedIn(login: string, password = TEST_PASSWORD): Promise<Browser> {
  const browser = new Browser(t.url);
  expect((await signIn(browser, login, password)).status).toBe(303);
  return browser;
}

/** The verification links mailed to `email` but these, once at least one came and the queue went quiet. */
async function laterLinks(email: string, seen: string[]): Promise<string[]> {
  await mailedLink(smtp, email, '/verify-email', seen.length + 1);
  await queuesSettled(db(), ['account-mail']);
  return linksIn(smtp, email, '/verify-email').filter((link) => !seen.includes(link));
}

/** Every earlier hour's throttle counts out of the window. */
const nextHour = () => t.clock.advance(LINK_MAIL_LIMITS.windowMs + 60_000);

describe('e-mail verification', () => {
  it('mails a link at sign-up; until it is followed the user signs in and looks around, but cannot create tokens, applications or organizers', async () => {
    nextHour();
    const username = unique('fresh');
    const email = `${username}@example.com`;
    expect((await signUp({ username, email })).status).toBe(303);
    const link = await mailedLink(smtp, email, '/verify-email');
    const [mail] = mailsTo(smtp, email, /Verify your e-mail address/);
    expect(mail!.html).toContain(link.replace(/&/g, '&amp;'));
    expect(mail!.text).toContain('The link works for 24 hours, once.');

    const browser = await signedIn(username, 'a-long-enough-passphrase');
    const account = await (await browser.get('/account')).text();
    expect(account).toContain('Verify your e-mail address to create personal access tokens.');
    expect(account).toContain('Send the link again');
    const applications = await (await browser.get('/applications')).text();
    expect(applications).toContain('Verify your e-mail address to register applications.');
    const security = await (await browser.get('/account/security')).text();
    expect(security).toContain('<span class="tag">not verified</span>');

    const form = formFields(account);
    const token = await browser.post('/account/tokens', { _csrf: form._csrf!, name: 'script', scopes: 'api' });
    expect(token.status).toBe(403);
    const app = await browser.post('/applications', {
      _csrf: form._csrf!,
      name: 'App',
      redirect_uris: 'https://app.example/cb',
      scopes: 'openid',
      client_type: 'confidential',
    });
    expect(app.status).toBe(403);
    const [{ count }] = (await db().query(
      `SELECT (SELECT count(*) FROM personal_access_tokens t JOIN users u ON u.id = t.user_id WHERE u.username = $1)
            + (SELECT count(*) FROM oauth_applications a JOIN users u ON u.id = a.owner_id WHERE u.username = $1) AS count`,
      [username],
    )) as [{ count: string }];
    expect(Number(count)).toBe(0);

    // Following the link: a page with a button (mail scanners open links), then the POST.
    const opened = await browser.get(link);
    expect(opened.status).toBe(200);
    expect(await opened.text()).toContain(`Confirm that <strong class="wrap">${email}</strong> is yours.`);
    expect((await t.get(UsersService).getByUsername(username)).emailVerified).toBe(false);
    const followed = await browser.post('/verify-email', formFields(await (await browser.get(link)).text()));
    expect(followed.status).toBe(303);
    expect(followed.headers.get('location')).toBe('/email-verified');
    expect((await t.get(UsersService).getByUsername(username)).emailVerified).toBe(true);
    expect(await (await browser.get('/account')).text()).not.toContain('Send the link again');
    const created = await browser.post('/account/tokens', { _csrf: form._csrf!, name: 'script', scopes: 'api' });
    expect(created.status).toBe(303);

    // Once: the second use is refused with a page that says so.
    const again = await followLink(new Browser(t.url), link);
    expect(again.status).toBe(410);
    expect(await again.text()).toContain('This link was already used');
  });

  it('refuses an unverified user on every API path that creates an organizer (GraphQL FORBIDDEN / EMAIL_NOT_VERIFIED, REST 403), and allows it once verified', async () => {
    const { user, token } = await createUserWithToken(t, ['api']);
    await db().query(`UPDATE users SET email_verified_at = NULL WHERE id = $1`, [user.id]);
    const slug = unique('club');
    const mutation = `mutation ($input: CreateOrganizerInput!) { createOrganizer(input: $input) { organizer { slug } userErrors { code } } }`;
    const refused = await graphql(t.url, mutation, { privateToken: token, variables: { input: { slug, name: 'Club' } } });
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'EMAIL_NOT_VERIFIED' });
    const viaRest = await rest(t.url, 'POST', '/api/organizers', { privateToken: token, body: { slug, name: 'Club' } });
    expect(viaRest.status).toBe(403);
    expect(viaRest.body).toMatchObject({ code: 'EMAIL_NOT_VERIFIED' });

    await t.get(UsersService).verifyEmail(user.username);
    const allowed = await graphql(t.url, mutation, { privateToken: token, variables: { input: { slug, name: 'Club' } } });
    expect(allowed.body.data?.createOrganizer.organizer).toEqual({ slug });
  });

  it('sends the link again on request (the older one stops working), and answers 429 with Retry-After past the hourly limit', async () => {
    nextHour();
    const user = await createUser(t, { verified: false });
    const browser = await signedIn(user.username);
    const form = formFields(await (await browser.get('/account')).text());
    const resend = () => browser.post('/account/email/verification', { _csrf: form._csrf!, return_to: '/account' });

    const first = await resend();
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/account');
    expect(await (await browser.get('/account')).text()).toContain(`We sent a new link to ${user.email}. It works for 24 hours.`);
    const older = await mailedLink(smtp, user.email, '/verify-email', 1);
    expect((await resend()).status).toBe(303);
    const newer = await mailedLink(smtp, user.email, '/verify-email', 2);
    expect(newer).not.toBe(older);
    expect((await followLink(new Browser(t.url), older)).status).toBe(410);

    for (let i = 2; i < LINK_MAIL_LIMITS['verify-user']; i++) expect((await resend()).status).toBe(303);
    const refused = await resend();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000);
    expect(await refused.text()).toContain('too many links in the last hour');

    // A link replaced before its job ran is not mailed at all; of those mailed, only the newest works.
    const later = await laterLinks(user.email, [older, newer]);
    const followed = await Promise.all(later.map(async (link) => (await followLink(new Browser(t.url), link)).status));
    expect(followed.filter((status) => status === 303)).toHaveLength(1);
    expect((await followLink(new Browser(t.url), newer)).status).toBe(410);
  });

  it('lets an operator mark an address verified', async () => {
    const user = await createUser(t, { verified: false });
    expect(await t.get(UsersService).verifyEmail(user.username)).toMatchObject({ changed: true });
    expect((await t.get(UsersService).getByUsername(user.username)).emailVerified).toBe(true);
  });
});

describe('changing the e-mail address', () => {
  it('mails the new address, keeps the old one until the link is followed, then switches and tells the old address', async () => {
    nextHour();
    const user = await createUser(t);
    const browser = await signedIn(user.username);
    const newEmail = `${unique('moved')}@example.com`;
    const form = formFields(await (await browser.get('/account/security')).text());
    const { posted, html } = await browser.submit('/account/email', {
      _csrf: form._csrf!,
      email: newEmail,
      current_password: TEST_PASSWORD,
    });
    expect(posted.status).toBe(303);
    expect(html).toContain(`We sent a link to ${newEmail}.`);
    expect(html).toMatch(new RegExp(`Waiting for <strong class="wrap">${newEmail}</strong>`));
    expect((await t.get(UsersService).findById(user.id))!.email).toBe(user.email);

    const link = await mailedLink(smtp, newEmail, '/verify-email');
    expect(mailsTo(smtp, newEmail, /Confirm your new e-mail address/)).toHaveLength(1);
    const followed = await followLink(browser, link);
    expect(followed.status).toBe(303);
    expect(followed.headers.get('location')).toBe('/email-verified?changed=1');
    const now = (await t.get(UsersService).findById(user.id))!;
    expect(now).toMatchObject({ email: newEmail, emailVerified: true });
    expect(await securityNoticeJobs(db(), user.id)).toContainEqual({
      userId: user.id,
      notice: { kind: 'email-changed', newEmail },
      to: user.email,
      at: expect.any(String),
    });
    expect((await signIn(new Browser(t.url), newEmail, TEST_PASSWORD)).status).toBe(303);
    expect((await followLink(browser, link)).status).toBe(410);
  });

  it('ends a reset link mailed to the old address once the new one takes effect', async () => {
    nextHour();
    const user = await createUser(t);
    const browser = await signedIn(user.username);
    const anon = new Browser(t.url);
    const asked = await anon.post('/forgot-password', {
      ...formFields(await (await anon.get('/forgot-password')).text()),
      email: user.email,
    });
    expect(asked.status).toBe(303);
    const reset = await mailedLink(smtp, user.email, '/reset-password');
    const moved = `${unique('moved-on')}@example.com`;
    const form = formFields(await (await browser.get('/account/security')).text());
    expect((await browser.post('/account/email', { _csrf: form._csrf!, email: moved, current_password: TEST_PASSWORD })).status).toBe(303);
    expect((await followLink(browser, await mailedLink(smtp, moved, '/verify-email'))).status).toBe(303);
    expect((await anon.get(reset)).status).toBe(410);
  });

  it('refuses the link when another account took the address meanwhile, and keeps the old address', async () => {
    nextHour();
    const user = await createUser(t);
    const browser = await signedIn(user.username);
    const wanted = `${unique('wanted')}@example.com`;
    const form = formFields(await (await browser.get('/account/security')).text());
    expect((await browser.post('/account/email', { _csrf: form._csrf!, email: wanted, current_password: TEST_PASSWORD })).status).toBe(303);
    const link = await mailedLink(smtp, wanted, '/verify-email');
    await createUser(t, { email: wanted });
    const followed = await followLink(browser, link);
    expect(followed.status).toBe(409);
    expect(await followed.text()).toContain('This address is used by another account');
    expect((await t.get(UsersService).findById(user.id))!.email).toBe(user.email);
  });
});

describe('password reset', () => {
  it('mails a link valid once: the sign-up rules apply, every session ends, the user is told, and a second use is refused', async () => {
    nextHour();
    const user = await createUser(t);
    const elsewhere = await signedIn(user.username);
    const signInPage = await (await new Browser(t.url).get('/sign-in')).text();
    expect(signInPage).toContain('<a href="/forgot-password">Forgot password?</a>');

    const browser = new Browser(t.url);
    const form = formFields(await (await browser.get('/forgot-password')).text());
    const asked = await browser.post('/forgot-password', { ...form, email: user.email.toUpperCase() });
    expect(asked.status).toBe(303);
    expect(asked.headers.get('location')).toBe('/check-email?about=reset');
    const link = await mailedLink(smtp, user.email, '/reset-password');
    expect(mailsTo(smtp, user.email, /Reset your Agora password/)[0]!.text).toContain('The link works for one hour, once.');

    const weak = await followLink(browser, link, { password: 'short' });
    expect(weak.status).toBe(422);
    expect(await weak.text()).toContain('<p class="field-error" id="password-error" role="alert">Password must be at least 10 characters');
    const reset = await followLink(browser, link, { password: 'a-brand-new-passphrase' });
    expect(reset.status).toBe(303);
    expect(reset.headers.get('location')).toBe('/password-reset');
    expect(browser.cookie('agora_session')).toBeUndefined();

    expect((await elsewhere.get('/account')).status).toBe(303);
    expect((await signIn(new Browser(t.url), user.username, TEST_PASSWORD)).status).toBe(401);
    expect((await signIn(new Browser(t.url), user.username, 'a-brand-new-passphrase')).status).toBe(303);
    expect((await securityNoticeJobs(db(), user.id)).map((job) => job.notice.kind)).toContain('password-reset');

    const again = await followLink(new Browser(t.url), link, { password: 'yet-another-passphrase' });
    expect(again.status).toBe(410);
    expect(await again.text()).toContain('This link was already used');
    expect((await signIn(new Browser(t.url), user.username, 'a-brand-new-passphrase')).status).toBe(303);
  });

  it('ends a sign-in waiting for its second step, begun with the old password: the right code no longer finishes it', async () => {
    nextHour();
    const user = await createUser(t);
    const totp = t.get(TotpService);
    await totp.startEnrolment(user.id);
    const { secret } = (await totp.enrolment(user.id, user.username))!;
    const codeAt = (ms: number) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: ms });
    await totp.confirm(user.id, codeAt(t.clock.now().getTime()));
    t.clock.advance(30_000 - (t.clock.now().getTime() % 30_000) + 1000); // the next code is a new one

    const waiting = new Browser(t.url);
    expect((await signIn(waiting, user.username, TEST_PASSWORD)).headers.get('location')).toBe('/sign-in/second-factor');
    const fields = formFields(await (await waiting.get('/sign-in/second-factor')).text());
    const anon = new Browser(t.url);
    await anon.post('/forgot-password', { ...formFields(await (await anon.get('/forgot-password')).text()), email: user.email });
    const link = await mailedLink(smtp, user.email, '/reset-password');
    expect((await followLink(anon, link, { password: 'a-brand-new-passphrase' })).status).toBe(303);

    const res = await waiting.post('/sign-in/second-factor', { ...fields, code: codeAt(t.clock.now().getTime()) });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/sign-in?return_to=%2F');
    expect(waiting.cookie('agora_session')).toBeUndefined();
    expect(await db().query('SELECT id FROM pending_sign_ins WHERE user_id = $1', [user.id])).toEqual([]);
  });

  it('ends a link mailed before the password was changed on the security page', async () => {
    nextHour();
    const user = await createUser(t);
    const browser = await signedIn(user.username);
    const anon = new Browser(t.url);
    await anon.post('/forgot-password', { ...formFields(await (await anon.get('/forgot-password')).text()), email: user.email });
    const link = await mailedLink(smtp, user.email, '/reset-password');
    const form = formFields(await (await browser.get('/account/security')).text());
    const changed = await browser.post('/account/password', {
      _csrf: form._csrf!,
      current_password: TEST_PASSWORD,
      new_password: 'a-much-better-passphrase',
    });
    expect(changed.status).toBe(303);
    const followed = await followLink(anon, link, { password: 'the-attackers-passphrase' });
    expect(followed.status).toBe(410);
    expect((await signIn(new Browser(t.url), user.username, 'the-attackers-passphrase')).status).toBe(401);
    expect((await signIn(new Browser(t.url), user.username, 'a-much-better-passphrase')).status).toBe(303);
  });

  it('refuses a link after its hour, and one replaced by a newer link', async () => {
    nextHour();
    const user = await createUser(t);
    const browser = new Browser(t.url);
    const ask = async () =>
      browser.post('/forgot-password', { ...formFields(await (await browser.get('/forgot-password')).text()), email: user.email });
    expect((await ask()).status).toBe(303);
    const first = await mailedLink(smtp, user.email, '/reset-password', 1);
    expect((await ask()).status).toBe(303);
    const second = await mailedLink(smtp, user.email, '/reset-password', 2);
    expect((await browser.get(first)).status).toBe(410);
    expect((await browser.get(second)).status).toBe(200);

    t.clock.advance(61 * 60_000);
    const expired = await browser.get(second);
    expect(expired.status).toBe(410);
    expect(await expired.text()).toContain('This link has expired');
    expect((await followLink(browser, second, { password: 'a-brand-new-passphrase' })).status).toBe(410);
  });

  it('refuses a verification link after its 24 hours; a new one sent on request works', async () => {
    nextHour();
    const username = unique('late');
    const email = `${username}@example.com`;
    expect((await signUp({ username, email })).status).toBe(303);
    const link = await mailedLink(smtp, email, '/verify-email');

    t.clock.advance(23 * 3600_000);
    const browser = new Browser(t.url);
    expect((await browser.get(link)).status).toBe(200);
    t.clock.advance(3600_000 + 60_000);
    const expired = await browser.get(link);
    expect(expired.status).toBe(410);
    expect(await expired.text()).toContain('This link has expired');
    expect((await followLink(browser, link)).status).toBe(410);
    expect((await t.get(UsersService).getByUsername(username)).emailVerified).toBe(false);

    const signedInNow = await signedIn(username, 'a-long-enough-passphrase');
    const account = formFields(await (await signedInNow.get('/account')).text());
    const resent = await signedInNow.post('/account/email/verification', { _csrf: account._csrf!, return_to: '/account' });
    expect(resent.status).toBe(303);
    expect(resent.headers.get('location')).toBe('/account');
    const fresh = await mailedLink(smtp, email, '/verify-email', 2);
    expect((await followLink(signedInNow, fresh)).status).toBe(303);
    expect((await t.get(UsersService).getByUsername(username)).emailVerified).toBe(true);
  });

  it('answers a forged or mangled link with 404', async () => {
    const browser = new Browser(t.url);
    expect((await browser.get(`/reset-password?token=${'A'.repeat(65)}`)).status).toBe(404);
    expect((await browser.get('/reset-password?token=nonsense')).status).toBe(404);
    expect((await browser.get('/verify-email')).status).toBe(404);
  });

  it('throttles per typed address with 429 and Retry-After, and mails one account at most a few links an hour', async () => {
    nextHour();
    const user = await createUser(t);
    const browser = new Browser(t.url);
    const form = formFields(await (await browser.get('/forgot-password')).text());
    const statuses: number[] = [];
    for (let i = 0; i < LINK_MAIL_LIMITS['reset-email'] + 1; i++)
      statuses.push((await browser.post('/forgot-password', { ...form, email: user.email })).status);
    expect(statuses.slice(0, -1).every((s) => s === 303)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    // Another spelling of the address is the same account: answered as usual, but no further mail.
    expect((await browser.post('/forgot-password', { ...form, email: ` ${user.email.toUpperCase()}` })).status).toBe(429);
    await mailedLink(smtp, user.email, '/reset-password');
    await queuesSettled(db(), ['account-mail']);
    const [{ links }] = (await db().query(
      `SELECT count(*)::int AS links FROM account_links WHERE user_id = $1 AND purpose = 'reset-password'`,
      [user.id],
    )) as [{ links: number }];
    expect(links).toBe(LINK_MAIL_LIMITS['reset-user']);
    expect(mailsTo(smtp, user.email, /Reset your Agora password/).length).toBeLessThanOrEqual(LINK_MAIL_LIMITS['reset-user']);
  });
});

describe('link tokens at rest', () => {
  it('are nowhere in the database: neither the links table nor the mail jobs hold one', async () => {
    nextHour();
    const user = await createUser(t);
    const anon = new Browser(t.url);
    await anon.post('/forgot-password', { ...formFields(await (await anon.get('/forgot-password')).text()), email: user.email });
    const token = new URL(await mailedLink(smtp, user.email, '/reset-password'), t.url).searchParams.get('token')!;
    const [{ hits }] = (await db().query(
      `SELECT (SELECT count(*) FROM pgboss.job j WHERE j.data::text LIKE '%' || $1 || '%')
            + (SELECT count(*) FROM account_links l WHERE l::text LIKE '%' || $1 || '%') AS hits`,
      [token.slice(22)],
    )) as [{ hits: string }];
    expect(Number(hits)).toBe(0);
  });
});

describe('sign-up with an address that has an account', () => {
  it('creates nothing and tells the owner of the address', async () => {
    nextHour();
    const owner = await createUser(t);
    expect((await signUp({ username: unique('copycat'), email: owner.email.toUpperCase() })).status).toBe(303);
    const [mail] = await eventually(() => {
      const mails = mailsTo(smtp, owner.email, /Someone tried to create/);
      expect(mails).not.toHaveLength(0);
      return mails;
    }, 10_000);
    expect(mail!.text).toContain(`Your account is @${owner.username}.`);
    expect(mail!.text).toContain('/forgot-password');
  });
});
