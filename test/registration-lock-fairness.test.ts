import { DataSource } from 'typeorm';
import { createEvent, createManyUsersWithTokens, createOrganizer, mutateRaw, registerFor, registrationOf } from './support/events.js';
import { createUserWithToken } from './support/fixtures.js';
import { serverUrl } from './support/database.js';
import { startTestApp, TestApp } from './support/test-app.js';

// The embedded database serves one connection at a time: nothing there waits on a row lock.
const onServer = serverUrl() ? describe : describe.skip;

/**
 * A waitlisted registration locks the event's row like any change to it. PostgreSQL grants a share
 * lock on a row that is only share-locked without queueing behind a waiting FOR UPDATE: when waitlisted
 * registrations shared the lock, a stream of them overlapping kept a cancellation (or an edit of the
 * event) waiting until the stream ended. Here the cancellation must be answered while the stream goes on.
 */
onServer('Changes to an event during a stream of waitlisted registrations', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('a cancellation is answered while waitlisted registrations keep coming', async () => {
    const owner = (await createUserWithToken(t)).token;
    const organizerId = (await createOrganizer(t, owner)).id;
    const event = await createEvent(t, owner, organizerId, { capacity: 1 });
    const first = await createUserWithToken(t);
    const held = registrationOf(await registerFor(t, first.token, event));
    const users = await createManyUsersWithTokens(t, 300);
    // Each registration holds the event's row a little longer than on a quiet server, so that 30 in flight
    // always overlap there (as a ticket rush does): what shared locks never let a writer through.
    const db = t.get(DataSource);
    await db.query(
      `CREATE FUNCTION slow_registration() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.01 + random() * 0.05); RETURN NEW; END $$`,
    );
    await db.query(`CREATE TRIGGER slow_registration BEFORE INSERT ON registrations FOR EACH ROW EXECUTE FUNCTION slow_registration()`);

    // 30 in flight, each registering the next user as soon as the last is answered (all waitlisted), until told to stop.
    let stop = false;
    let next = 0;
    let answered = 0;
    const stream = Array.from({ length: 30 }, async () => {
      while (!stop && next < users.length) {
        const res = await registerFor(t, users[next++]!.token, event);
        expect(registrationOf(res).status).toBe('WAITLISTED');
        answered++;
      }
    });
    while (answered < 60) await new Promise((resolve) => setTimeout(resolve, 10));

    const res = await mutateRaw(t, first.token, 'cancelRegistration', { registrationId: held.id }, 'registration { id status }');
    const whenCancelled = next;
    stop = true;
    await Promise.all(stream);
    await db.query(`DROP TRIGGER slow_registration ON registrations`);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data!.cancelRegistration.registration.status).toBe('CANCELLED');
    // Answered before the stream ran out of users (a starved cancellation waits for the last of them).
    expect(whenCancelled).toBeLessThan(users.length);
  });
});
