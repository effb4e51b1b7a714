import { DataSource } from 'typeorm';
import { createOrganizer, createEvent, mutate, mutateRaw } from './support/events.js';
import { Browser, signIn } from './support/browser.js';
import { createUserWithToken, TEST_PASSWORD } from './support/fixtures.js';
import { graphql, rest } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';

/**
 * Organizers that require a second factor of their team (docs/account-security.md): owners set it with a
 * grace period in hours; past it, a member without a second factor cannot act for the organizer
 * (SECOND_FACTOR_REQUIRED) but still reads what everyone reads; once they set one up, they can again.
 * Time moves by the test clock; a second factor is given by writing users.totp_* directly.
 */
let t: TestApp;
let db: DataSource;
beforeAll(async () => {
  t = await startTestApp();
  db = t.get(DataSource);
});
afterAll(() => t.close());

const HOUR = 3_600_000;

async function member(): Promise<{ id: string; username: string; token: string }> {
  const { user, token } = await createUserWithToken(t);
  // Verified, for whatever a verified address is asked for (creating organizers).
  await db.query(`UPDATE users SET email_verified_at = now() WHERE id = $1`, [user.id]);
  return { id: user.id, username: user.username, token };
}

async function giveTotp(userId: string): Promise<void> {
  await db.query(`UPDATE users SET totp_secret = 'sealed-for-the-test', totp_enabled_at = now() WHERE id = $1`, [userId]);
}

const REQUIREMENT = 'organizer { secondFactorRequiredSince secondFactorGraceHours viewerSecondFactorDeadline }';

/** An organizer with an owner who has a second factor and an admin who has none. */
async function team() {
  const owner = await member();
  const admin = await member();
  await giveTotp(owner.id);
  const organizer = await createOrganizer(t, owner.token);
  await mutate(
    t,
    owner.token,
    'addOrganizerMember',
    { organizerId: organizer.id, username: admin.username, role: 'ADMIN' },
    'member { role }',
  );
  return { owner, admin, organizer };
}

/** The admin's attempt to rename the organizer: null when it worked, else the error's extensions and message. */
async function rename(token: string, organizerId: string) {
  const res = await mutateRaw(t, token, 'updateOrganizer', { organizerId, name: `Renamed ${Date.now()}` }, 'organizer { name }');
  const error = res.body.errors?.[0];
  return error ? { ...error.extensions, message: error.message } : null;
}

describe('organizers that require a second factor', () => {
  it('lets owners only set it, and an owner only once they have a second factor themselves', async () => {
    const owner = await member();
    const admin = await member();
    const organizer = await createOrganizer(t, owner.token);
    await mutate(
      t,
      owner.token,
      'addOrganizerMember',
      { organizerId: organizer.id, username: admin.username, role: 'ADMIN' },
      'member { role }',
    );

    const withoutOwn = await mutateRaw(
      t,
      owner.token,
      'updateOrganizer',
      { organizerId: organizer.id, requireSecondFactor: true },
      REQUIREMENT,
    );
    expect(withoutOwn.body.data?.updateOrganizer.userErrors).toEqual([
      {
        field: ['input', 'requireSecondFactor'],
        code: 'OWNER_WITHOUT_SECOND_FACTOR',
        message: expect.stringContaining('your own account'),
      },
    ]);

    await giveTotp(admin.id);
    const byAdmin = await mutateRaw(
      t,
      admin.token,
      'updateOrganizer',
      { organizerId: organizer.id, requireSecondFactor: true },
      REQUIREMENT,
    );
    expect(byAdmin.body.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'FORBIDDEN' });

    await giveTotp(owner.id);
    const badGrace = await mutateRaw(
      t,
      owner.token,
      'updateOrganizer',
      { organizerId: organizer.id, secondFactorGraceHours: 9000 },
      REQUIREMENT,
    );
    expect(badGrace.body.data?.updateOrganizer.userErrors[0]).toMatchObject({
      code: 'INVALID_GRACE_HOURS',
      field: ['input', 'secondFactorGraceHours'],
    });

    const set = await mutate(
      t,
      owner.token,
      'updateOrganizer',
      { organizerId: organizer.id, requireSecondFactor: true, secondFactorGraceHours: 24 },
      REQUIREMENT,
    );
    expect(set.organizer).toEqual({
      secondFactorRequiredSince: expect.any(String),
      secondFactorGraceHours: 24,
      // The owner has one: nothing to do by any time.
      viewerSecondFactorDeadline: null,
    });
    expect(Math.abs(Date.parse(set.organizer.secondFactorRequiredSince) - t.clock.now().getTime())).toBeLessThan(5000);

    // Setting it again keeps its start: the grace period does not begin again.
    t.clock.advance(HOUR);
    const again = await mutate(t, owner.token, 'updateOrganizer', { organizerId: organizer.id, requireSecondFactor: true }, REQUIREMENT);
    expect(again.organizer.secondFactorRequiredSince).toBe(set.organizer.secondFactorRequiredSince);
  });

  it('lets a member without a second factor act during the grace period, refuses them after it, and lets them again once they have one', async () => {
    const { owner, admin, organizer } = await team();
    const set = await mutate(
      t,
      owner.token,
      'updateOrganizer',
      { organizerId: organizer.id, requireSecondFactor: true, secondFactorGraceHours: 24 },
      REQUIREMENT,
    );
    const deadline = new Date(Date.parse(set.organizer.secondFactorRequiredSince) + 24 * HOUR).toISOString();

    // During the grace period: allowed, and told by when.
    t.clock.advance(23 * HOUR);
    expect(await rename(admin.token, organizer.id)).toBeNull();
    const seen = await graphql(t.url, `{ organizer(slug: "${organizer.slug}") { viewerRole viewerSecondFactorDeadline } }`, {
      privateToken: admin.token,
    });
    expect(seen.body.data?.organizer).toEqual({ viewerRole: 'ADMIN', viewerSecondFactorDeadline: deadline });

    // After it: refused, with what to do and since when; public reads stay open.
    t.clock.advance(2 * HOUR);
    const refused = await rename(admin.token, organizer.id);
    expect(refused).toMatchObject({ code: 'FORBIDDEN', reason: 'SECOND_FACTOR_REQUIRED' });
    expect(refused!.message).toContain('/account/security');
    expect(refused!.message).toContain(deadline);
    const createEventRes = await mutateRaw(
      t,
      admin.token,
      'createEvent',
      {
        organizerId: organizer.id,
        title: 'Refused',
        startsAt: new Date(t.clock.now().getTime() + 30 * 24 * HOUR).toISOString(),
        endsAt: new Date(t.clock.now().getTime() + 30 * 24 * HOUR + 2 * HOUR).toISOString(),
        timeZone: 'Europe/Paris',
        format: 'ONLINE',
        onlineUrl: 'https://meet.example.com/x',
        visibility: 'PUBLIC',
      },
      'event { id }',
    );
    expect(createEventRes.body.errors?.[0]?.extensions).toMatchObject({ reason: 'SECOND_FACTOR_REQUIRED' });
    const teamRes = await graphql(t.url, `{ organizer(slug: "${organizer.slug}") { name viewerRole members { nodes { role } } } }`, {
      privateToken: admin.token,
    });
    expect(teamRes.body.data?.organizer).toMatchObject({ name: expect.any(String), viewerRole: null, members: null });
    expect(teamRes.body.errors?.[0]?.extensions).toMatchObject({ reason: 'SECOND_FACTOR_REQUIRED' });

    // The legacy REST API refuses alike: 403 with the code.
    const patched = await rest(t.url, 'PATCH', `/api/organizers/${organizer.slug}`, {
      privateToken: admin.token,
      body: { name: 'Via REST' },
    });
    expect(patched.status).toBe(403);
    expect(patched.body).toMatchObject({ code: 'SECOND_FACTOR_REQUIRED', message: expect.stringContaining('/account/security') });

    // The owner, who has one, goes on.
    expect(await rename(owner.token, organizer.id)).toBeNull();

    // A second factor set up: allowed again at once.
    await giveTotp(admin.id);
    expect(await rename(admin.token, organizer.id)).toBeNull();
  });

  it('holds back a member’s work on drafts too, telling them why rather than “not found”', async () => {
    const { owner, admin, organizer } = await team();
    const draft = await createEvent(t, owner.token, organizer.id, { publish: false });
    await mutate(
      t,
      owner.token,
      'updateOrganizer',
      { organizerId: organizer.id, requireSecondFactor: true, secondFactorGraceHours: 0 },
      REQUIREMENT,
    );
    const publish = await mutateRaw(t, admin.token, 'publishEvent', { eventId: draft.id }, 'event { id }');
    expect(publish.body.errors?.[0]?.extensions).toMatchObject({ reason: 'SECOND_FACTOR_REQUIRED' });
    // What everyone sees: a draft is not among it.
    const read = await graphql(t.url, `{ node(id: "${draft.id}") { id } }`, { privateToken: admin.token });
    expect(read.body.data?.node).toBeNull();
  });

  it('counts a later member’s grace period from when they joined, and lets a held-back member leave', async () => {
    const { owner, admin, organizer } = await team();
    await mutate(
      t,
      owner.token,
      'updateOrganizer',
      { organizerId: organizer.id, requireSecondFactor: true, secondFactorGraceHours: 48 },
      REQUIREMENT,
    );
    t.clock.advance(72 * HOUR);
    const newcomer = await member();
    await mutate(
      t,
      owner.token,
      'addOrganizerMember',
      { organizerId: organizer.id, username: newcomer.username, role: 'ADMIN' },
      'member { role }',
    );
    expect(await rename(newcomer.token, organizer.id)).toBeNull();
    expect(await rename(admin.token, organizer.id)).toMatchObject({ reason: 'SECOND_FACTOR_REQUIRED' });

    const left = await mutateRaw(
      t,
      admin.token,
      'removeOrganizerMember',
      { organizerId: organizer.id, username: admin.username },
      'organizer { id }',
    );
    expect(left.body.errors).toBeUndefined();
    expect(left.body.data?.removeOrganizerMember.userErrors).toEqual([]);
  });

  it('no longer holds anyone back once the owners stop requiring it', async () => {
    const { owner, admin, organizer } = await team();
    await mutate(
      t,
      owner.token,
      'updateOrganizer',
      { organizerId: organizer.id, requireSecondFactor: true, secondFactorGraceHours: 1 },
      REQUIREMENT,
    );
    t.clock.advance(2 * HOUR);
    expect(await rename(admin.token, organizer.id)).toMatchObject({ reason: 'SECOND_FACTOR_REQUIRED' });
    const off = await mutate(t, owner.token, 'updateOrganizer', { organizerId: organizer.id, requireSecondFactor: false }, REQUIREMENT);
    expect(off.organizer.secondFactorRequiredSince).toBeNull();
    expect(await rename(admin.token, organizer.id)).toBeNull();
  });
  it('warns a member without one on the account and security pages, with the deadline, until they set one up', async () => {
    const { owner, admin, organizer } = await team();
    const browser = new Browser(t.url);
    expect((await signIn(browser, admin.username, TEST_PASSWORD)).status).toBe(303);
    const notice = async (path: string) => {
      const page = await (await browser.get(path)).text();
      return /<div class="alert warn" role="status" id="second-factor-required">([\s\S]*?)<\/div>/.exec(page)?.[1] ?? null;
    };
    expect(await notice('/account')).toBeNull();

    await mutate(
      t,
      owner.token,
      'updateOrganizer',
      { organizerId: organizer.id, requireSecondFactor: true, secondFactorGraceHours: 48 },
      REQUIREMENT,
    );
    const deadline = new Date(t.clock.now().getTime() + 48 * HOUR).toISOString().slice(0, 16);
    for (const path of ['/account', '/account/security']) {
      const before = await notice(path);
      expect(before).toContain(`Organizer ${organizer.slug}`);
      expect(before).toContain('requires it by');
      expect(before).toMatch(new RegExp(`datetime="${deadline}`));
      expect(before).toContain('href="/account/security#two-factor"');
    }

    t.clock.advance(49 * HOUR);
    const after = await notice('/account');
    expect(after).toContain('has required it since');
    expect(after).toContain('you cannot act for this organizer');

    await giveTotp(admin.id);
    expect(await notice('/account')).toBeNull();
    expect(await notice('/account/security')).toBeNull();
  });
});
