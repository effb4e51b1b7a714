import ICAL from 'ical.js';
import jsQRModule from 'jsqr';
import type { ParsedMail } from 'mailparser';
import { PNG } from 'pngjs';
import { DataSource } from 'typeorm';
import { UnsubscribeLinks } from '../src/notifications/unsubscribe-links.js';
import { UsersService } from '../src/users/users.service.js';
import { createEvent, createOrganizer, mutate, registerFor, registrationOf } from './support/events.js';
import { createUserWithToken } from './support/fixtures.js';
import { startSmtpServer, type Arrival, type TestSmtpServer } from './support/smtp-server.js';
import { startTestApp, TestApp } from './support/test-app.js';
import { eventually } from './support/eventually.js';
import { MAIL_QUEUES, queuesSettled } from './support/job-queue.js';

// What attendees hear, end to end: the change in the API, the job, the mail in a real SMTP server.

let smtp: TestSmtpServer;
let t: TestApp;
let organizer: { token: string; id: string };

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestApp({ SMTP_URL: smtp.url, MAIL_FROM: 'Agora Events <events@agora.test>', JOBS_RETRY_DELAY_SECONDS: '1' });
  const owner = await createUserWithToken(t);
  organizer = { token: owner.token, id: (await createOrganizer(t, owner.token)).id };
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

/** The mails about events to `address` (not the security notice of the test user's own personal access token). */
function mailsTo(address: string): ParsedMail[] {
  return smtp.arrivals
    .filter((a: Arrival) => a.to.includes(address) && !/^A personal access token was created/.test(a.mail.subject ?? ''))
    .map((a) => a.mail);
}

/** Until every mail job due by now has run (and its mail arrived): what has not arrived then was not sent. */
const mailSettled = () => queuesSettled(t.get(DataSource), MAIL_QUEUES);

/** The one mail to `address` whose subject matches, once it has arrived. */
function mailTo(address: string, subject: RegExp, limitMs?: number): Promise<ParsedMail> {
  return eventually(() => {
    const found = mailsTo(address).filter((m) => subject.test(m.subject ?? ''));
    if (found.length !== 1)
      throw new Error(
        `${found.length} mails to ${address} match ${subject}: ${mailsTo(address)
          .map((m) => m.subject)
          .join(' | ')}`,
      );
    return found[0]!;
  }, limitMs);
}

function calendarOf(mail: ParsedMail) {
  const file = mail.attachments.find((a) => a.contentType === 'text/calendar' || a.filename === 'event.ics');
  if (!file) throw new Error('no calendar file');
  const calendar = new ICAL.Component(ICAL.parse(file.content.toString('utf8')));
  const event = calendar.getFirstSubcomponent('vevent')!;
  return {
    method: calendar.getFirstPropertyValue('method'),
    uid: event.getFirstPropertyValue('uid'),
    sequence: Number(event.getFirstPropertyValue('sequence')),
    start: event.getFirstProperty('dtstart')!,
    status: event.getFirstPropertyValue('status'),
  };
}

/** The check-in codes drawn as QR images in the mail, decoded as a phone's camera would. */
function qrCodesOf(mail: ParsedMail): string[] {
  return mail.attachments
    .filter((a) => a.contentType === 'image/png')
    .map((a) => {
      const png = PNG.sync.read(a.content);
      const code = jsQRModule.default(new Uint8ClampedArray(png.data), png.width, png.height);
      if (!code) throw new Error(`no QR code in ${a.filename}`);
      return code.data;
    });
}

async function attendee(): Promise<{ token: string; email: string; id: string }> {
  const { user, token } = await createUserWithToken(t);
  return { token, email: user.email, id: user.id };
}

describe('mail to attendees', () => {
  it('confirms a registration once: both parts, the calendar file in the event’s zone, a ticket per attendee that checks in', async () => {
    const event = await createEvent(t, organizer.token, organizer.id, { title: 'Rust & <Friends> Paris' });
    const ann = await attendee();
    registrationOf(await registerFor(t, ann.token, event, 2));

    const mail = await mailTo(ann.email, /registered:/);
    expect(mail.from?.value).toEqual([{ name: 'Agora Events', address: 'events@agora.test' }]);
    expect(mail.subject).toContain('Rust & <Friends> Paris');
    expect(mail.text).toContain('Rust & <Friends> Paris');
    expect(mail.html).toContain('Rust &amp; &lt;Friends&gt; Paris');
    expect(mail.text).toMatch(/registered/i); // why the person got it
    const calendar = calendarOf(mail);
    expect(calendar.method).toBe('PUBLISH');
    expect(calendar.uid).toMatch(/^event-[0-9a-f-]{36}@127\.0\.0\.1$/);
    expect(calendar.start.getParameter('tzid')).toBe('Europe/Paris');

    const codes = qrCodesOf(mail);
    expect(codes).toHaveLength(2);
    const scan = await mutate(
      t,
      organizer.token,
      'checkInAttendee',
      { code: codes[0], eventId: event.id },
      'attendee { name checkedInAt } alreadyCheckedIn',
    );
    expect(scan).toMatchObject({ attendee: { name: 'Attendee 1' }, alreadyCheckedIn: false });

    await mailSettled();
    expect(mailsTo(ann.email)).toHaveLength(1);
  }, 40_000);

  it('tells a waitlisted registrant, then promotes them when a seat frees, and tells the one who cancelled', async () => {
    const event = await createEvent(t, organizer.token, organizer.id, { capacity: 1 });
    const [first, second] = [await attendee(), await attendee()];
    const held = registrationOf(await registerFor(t, first.token, event));
    registrationOf(await registerFor(t, second.token, event));
    await mailTo(first.email, /registered:/);
    const waitlisted = await mailTo(second.email, /waitlist/i);
    expect(waitlisted.attachments.filter((a) => a.contentType === 'image/png')).toHaveLength(0);

    await mutate(t, first.token, 'cancelRegistration', { registrationId: held.id }, 'registration { status }');
    const cancelled = await mailTo(first.email, /^Registration cancelled/);
    expect(cancelled.text).toMatch(/is cancelled, as you asked/);
    const promoted = await mailTo(second.email, /^A place opened up/);
    expect(calendarOf(promoted).method).toBe('PUBLISH');
    expect(qrCodesOf(promoted)).toHaveLength(1);
  }, 40_000);

  it('promotes from the waitlist when the organizer raises the capacity, and tells the one promoted', async () => {
    const event = await createEvent(t, organizer.token, organizer.id, { capacity: 1 });
    const [first, second] = [await attendee(), await attendee()];
    registrationOf(await registerFor(t, first.token, event));
    registrationOf(await registerFor(t, second.token, event));
    await mailTo(second.email, /^You're on the waitlist/);
    await mutate(t, organizer.token, 'updateEvent', { eventId: event.id, capacity: 2 }, 'event { id }');
    const promoted = await mailTo(second.email, /^A place opened up/);
    expect(qrCodesOf(promoted)).toHaveLength(1);
    // A capacity change is not a change attendees are told of.
    await mailSettled();
    expect(mailsTo(first.email).map((m) => m.subject)).toEqual([expect.stringMatching(/^You're registered/)]);
  }, 40_000);

  it('promotes from the waitlist when more tickets of the type go on sale, and tells the one promoted', async () => {
    const event = await createEvent(t, organizer.token, organizer.id, { capacity: null, quantity: 1 });
    const [first, second] = [await attendee(), await attendee()];
    registrationOf(await registerFor(t, first.token, event));
    registrationOf(await registerFor(t, second.token, event));
    await mailTo(second.email, /^You're on the waitlist/);
    await mutate(t, organizer.token, 'updateTicketType', { ticketTypeId: event.ticketTypeId, quantity: 2 }, 'ticketType { id }');
    const promoted = await mailTo(second.email, /^A place opened up/);
    expect(qrCodesOf(promoted)).toHaveLength(1);
  }, 40_000);

  it('tells confirmed attendees when the time or place changes, with the calendar file updated; not for a new title', async () => {
    const event = await createEvent(t, organizer.token, organizer.id);
    const ann = await attendee();
    registrationOf(await registerFor(t, ann.token, event));
    const confirmation = await mailTo(ann.email, /registered:/);

    await mutate(t, organizer.token, 'updateEvent', { eventId: event.id, title: 'A better title' }, 'event { id }');
    const startsAt = new Date(t.clock.now().getTime() + 10 * 86_400_000);
    await mutate(
      t,
      organizer.token,
      'updateEvent',
      { eventId: event.id, startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 3_600_000).toISOString() },
      'event { id }',
    );
    const changed = await mailTo(ann.email, /^Changed:/);
    const before = calendarOf(confirmation);
    const after = calendarOf(changed);
    expect(after.uid).toBe(before.uid);
    expect(after.sequence).toBeGreaterThan(before.sequence);
    await mailSettled();
    expect(mailsTo(ann.email)).toHaveLength(2);
  }, 40_000);

  it('tells only what is still true: a time changed twice is one mail with the last time; a registrant after the change gets none', async () => {
    const event = await createEvent(t, organizer.token, organizer.id);
    const ann = await attendee();
    registrationOf(await registerFor(t, ann.token, event));
    await mailTo(ann.email, /registered:/);
    const at = (days: number) => {
      const startsAt = new Date(t.clock.now().getTime() + days * 86_400_000);
      return { startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 3_600_000).toISOString() };
    };
    await mutate(t, organizer.token, 'updateEvent', { eventId: event.id, ...at(12) }, 'event { id }');
    const final = at(13);
    await mutate(t, organizer.token, 'updateEvent', { eventId: event.id, ...final }, 'event { id }');
    const late = await attendee();
    registrationOf(await registerFor(t, late.token, event));
    const changed = await mailTo(ann.email, /^Changed:/);
    // The mail says the time it is now (calendar files count in whole seconds).
    expect(Math.floor((calendarOf(changed).start.getFirstValue() as ICAL.Time).toJSDate().getTime() / 1000)).toBe(
      Math.floor(new Date(final.startsAt).getTime() / 1000),
    );
    await mailTo(late.email, /registered:/);
    await mailSettled();
    expect(mailsTo(ann.email).filter((m) => /^Changed:/.test(m.subject ?? ''))).toHaveLength(1);
    expect(mailsTo(late.email)).toHaveLength(1);
  }, 40_000);

  it('tells everyone registered when the event is cancelled, with a calendar cancellation', async () => {
    const event = await createEvent(t, organizer.token, organizer.id, { capacity: 1 });
    const [confirmed, waiting] = [await attendee(), await attendee()];
    registrationOf(await registerFor(t, confirmed.token, event));
    registrationOf(await registerFor(t, waiting.token, event));
    await mailTo(confirmed.email, /registered:/);
    await mailTo(waiting.email, /waitlist/i);

    await mutate(t, organizer.token, 'cancelEvent', { eventId: event.id }, 'event { status }');
    for (const person of [confirmed, waiting]) {
      const mail = await mailTo(person.email, /^Cancelled:/);
      expect(calendarOf(mail)).toMatchObject({ method: 'CANCEL', status: 'CANCELLED' });
    }
  }, 40_000);

  it('delivers once when the SMTP server refuses for a while (4xx, then 5xx)', async () => {
    const event = await createEvent(t, organizer.token, organizer.id);
    const ann = await attendee();
    // The security notice of ann's token first, so that the refusals meet the confirmation.
    await eventually(() => {
      if (!smtp.arrivals.some((a) => a.to.includes(ann.email))) throw new Error('no token notice yet');
    });
    smtp.refuseNext({ code: 451, message: 'Try again later' }, { code: 554, message: 'Transaction failed' });
    const triesBefore = smtp.tries();
    registrationOf(await registerFor(t, ann.token, event));
    await mailTo(ann.email, /registered:/, 30_000);
    expect(smtp.tries() - triesBefore).toBeGreaterThanOrEqual(3);
    await mailSettled();
    expect(mailsTo(ann.email)).toHaveLength(1);
  }, 45_000);

  it('reminds the day before, with one-click unsubscribe; and sends no reminder to someone who turned them off', async () => {
    // The reminder is due 24 hours before the start: an event starting in 24 hours and 10 seconds. The
    // reminder is planned when the confirmation goes out, and not at all once its time has passed: jobs give
    // way to bursts of requests for up to 3 s (RequestLoad), so on a busy machine a 3 s lead was too short.
    const event = await createEvent(t, organizer.token, organizer.id, { startsInMs: 24 * 3_600_000 + 10_000 });
    const [ann, bob] = [await attendee(), await attendee()];
    await t.get(UsersService).setMailReminders(bob.id, false);
    registrationOf(await registerFor(t, ann.token, event));
    registrationOf(await registerFor(t, bob.token, event));
    const reminder = await mailTo(ann.email, /^Reminder:/, 40_000);
    const unsubscribe = (reminder.headers.get('list') as { unsubscribe: { url: string } }).unsubscribe.url;
    expect(reminder.headerLines.find((h) => h.key === 'list-unsubscribe-post')?.line).toBe(
      'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
    );
    expect(unsubscribe).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mail\/unsubscribe\?token=/);

    const res = await fetch(unsubscribe, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(res.status).toBe(200);
    expect((await t.get(UsersService).findById(ann.id))?.mailReminders).toBe(false);

    await mailTo(bob.email, /registered:/);
    await mailSettled();
    expect(mailsTo(bob.email).filter((m) => /^Reminder:/.test(m.subject ?? ''))).toHaveLength(0);
  }, 60_000);

  it('takes the one-click POST as multipart/form-data too (what RFC 8058 recommends), and only there', async () => {
    const ann = await attendee();
    const link = t.get(UnsubscribeLinks).url(ann.id).replace(t.config.baseUrl, t.url);
    const form = new FormData();
    form.set('List-Unsubscribe', 'One-Click');
    const res = await fetch(link, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    expect((await t.get(UsersService).findById(ann.id))?.mailReminders).toBe(false);

    const elsewhere = await fetch(`${t.url}/api/check_ins`, { method: 'POST', body: form });
    expect(elsewhere.status).toBe(415);
    const broken = await fetch(link, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
      body: 'not a form',
    });
    expect(broken.status).toBe(422);
  });

  it('refuses an unsubscribe address that is not ours, and asks before unsubscribing in a browser', async () => {
    const forged = await fetch(`${t.url}/mail/unsubscribe?token=abc`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(forged.status).toBe(422);
    expect(await forged.json()).toMatchObject({ code: 'INVALID_UNSUBSCRIBE_LINK' });
    const page = await fetch(`${t.url}/mail/unsubscribe?token=abc`);
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('This link is not valid');
  });
});
