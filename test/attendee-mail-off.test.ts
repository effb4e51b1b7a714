import { DataSource } from 'typeorm';
import { createEvent, createOrganizer, mutate, registerFor, registrationOf } from './support/events.js';
import { createUserWithToken } from './support/fixtures.js';
import { MAIL_QUEUES, queuesSettled } from './support/job-queue.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';
import { startTestApp, TestApp } from './support/test-app.js';

// ATTENDEE_MAIL=false: a platform whose own front end tells attendees; Agora writes no mail job at all.

let smtp: TestSmtpServer;
let t: TestApp;

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestApp({ SMTP_URL: smtp.url, ATTENDEE_MAIL: 'false' });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

it('registers, cancels and changes events without writing a mail job or sending a mail about them', async () => {
  const owner = await createUserWithToken(t);
  const organizer = await createOrganizer(t, owner.token);
  const event = await createEvent(t, owner.token, organizer.id, { startsInMs: 24 * 3_600_000 + 60_000 });
  const guest = await createUserWithToken(t);
  const registration = registrationOf(await registerFor(t, guest.token, event));
  await mutate(t, guest.token, 'cancelRegistration', { registrationId: registration.id }, 'registration { status }');
  await mutate(t, owner.token, 'cancelEvent', { eventId: event.id }, 'event { status }');

  const [{ count }] = (await t
    .get(DataSource)
    .query(`SELECT count(*)::int AS count FROM pgboss.job WHERE name IN ('registration-notices', 'event-notices')`)) as {
    count: number;
  }[];
  expect(count).toBe(0);
  // Every mail job has run: what arrived by now is all that was sent.
  await queuesSettled(t.get(DataSource), MAIL_QUEUES);
  // Only the security notices of the two users' tokens: those are about the account, not attendance.
  expect(smtp.arrivals.map((a) => a.mail.subject)).toEqual([
    expect.stringMatching(/^A personal access token was created/),
    expect.stringMatching(/^A personal access token was created/),
  ]);
});
