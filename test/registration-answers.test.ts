import { DataSource, QueryRunner } from 'typeorm';
import { JobQueue } from '../src/jobs/job-queue.js';
import { WebhookSweeper } from '../src/webhooks/webhook-sweeper.js';
import { createEvent, createOrganizer, mutate, mutateRaw, registerFor, registrationOf } from './support/events.js';
import { createUserWithToken } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';

/**
 * A mutation's answer must not depend on a read after its commit: under load such a read can fail (no
 * pooled connection in time, the database gone), and the client, told SERVICE_UNAVAILABLE, retries a
 * change that was made (ALREADY_REGISTERED). Here the database "goes away" right after the mutation's
 * transaction commits: every statement after that COMMIT fails as an unreachable database would, and the
 * mutation must still answer in full, from what its transaction wrote. (A registration is one statement,
 * its own transaction: there, everything after that statement fails.)
 */
describe('Registration mutations answer from their own transaction', () => {
  let t: TestApp;
  let owner: string;
  let organizerId: string;

  beforeAll(async () => {
    t = await startTestApp();
    // Statements of the background work are not the mutation's: the sweeper's, and (below) the jobs'.
    await t.get(WebhookSweeper).beforeApplicationShutdown();
    owner = (await createUserWithToken(t)).token;
    organizerId = (await createOrganizer(t, owner)).id;
  });
  afterAll(() => t.close());

  /** Until no job is due or running (a reminder set for later aside). */
  async function jobsDone(): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const states = await t.get(JobQueue).states();
      if (states.every((q) => q.waiting === 0 && q.active === 0)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('jobs still running after 10 s');
  }

  /**
   * Runs `request` with the database failing from the COMMIT of the transaction whose statement matches
   * `change` on: the statements logged after it (every statement goes through TypeORM's logger) throw
   * the error node-postgres gives for a lost connection.
   */
  async function failingAfterCommit<T>(change: RegExp, request: () => Promise<T>): Promise<{ answer: T; failed: string[] }> {
    await jobsDone();
    const logger = t.get(DataSource).logger;
    const original = logger.logQuery.bind(logger);
    let runner: QueryRunner | undefined;
    let down = false;
    const failed: string[] = [];
    let changed = false;
    logger.logQuery = (sql, parameters, queryRunner) => {
      if (down) {
        failed.push(sql);
        throw new Error('Connection terminated unexpectedly');
      }
      if (!changed && change.test(sql)) {
        changed = true;
        // A statement that is its own transaction: everything after it fails (it is logged before it runs).
        if (queryRunner?.isTransactionActive) runner = queryRunner;
        else down = true;
      } else if (runner && queryRunner === runner && sql === 'COMMIT') down = true;
      return original(sql, parameters, queryRunner);
    };
    try {
      const answer = await request();
      if (!down) throw new Error(`no commit of a statement matching ${change}`);
      return { answer, failed };
    } finally {
      logger.logQuery = original;
    }
  }

  const FIELDS = `
    id status referenceCode quantity createdAt confirmedAt
    attendees { id name email checkedInAt registration { id status } }
    ticketType { id name remaining }
    event { id spotsLeft onlineUrl viewerRegistration { id status } ticketTypes { id remaining } organizer { id name viewerRole } }
    user { id name }
    attendees { ticketCode }`;
  const REGISTRATION = `registration { ${FIELDS} }`;

  it('registerForEvent: the registration, its attendees, ticket type and event, with nothing read after the commit', async () => {
    const event = await createEvent(t, owner, organizerId, { capacity: 2, quantity: 5 });
    const guest = await createUserWithToken(t);
    const input = {
      eventId: event.id,
      ticketTypeId: event.ticketTypeId,
      attendees: [
        { name: 'Ada', email: 'ada@example.com' },
        { name: 'Grace', email: 'grace@example.com' },
      ],
    };
    const { answer: res, failed } = await failingAfterCommit(/INSERT INTO registrations/, () =>
      mutateRaw(t, guest.token, 'registerForEvent', input, REGISTRATION),
    );
    expect(res.body.errors).toBeUndefined();
    const registration = registrationOf(res);
    expect(registration).toMatchObject({
      status: 'CONFIRMED',
      quantity: 2,
      attendees: [
        { name: 'Ada', email: 'ada@example.com', checkedInAt: null, registration: { id: registration.id, status: 'CONFIRMED' } },
        { name: 'Grace', email: 'grace@example.com', checkedInAt: null, registration: { id: registration.id, status: 'CONFIRMED' } },
      ],
      ticketType: { id: event.ticketTypeId, name: 'General admission', remaining: 3 },
      // What depends on the caller: their registration, the online address it opens, their role.
      event: {
        id: event.id,
        spotsLeft: 0,
        onlineUrl: 'https://meet.example.com/room-42',
        viewerRegistration: { id: registration.id, status: 'CONFIRMED' },
        ticketTypes: [{ id: event.ticketTypeId, remaining: 3 }],
        organizer: { id: organizerId, viewerRole: null },
      },
      user: { id: (await graphql(t.url, '{ viewer { id } }', { privateToken: guest.token })).body.data!.viewer.id, name: guest.user.name },
    });
    expect(failed).toEqual([]);

    // What it answered is what was written.
    const stored = await graphql(t.url, `query($id: ID!) { node(id: $id) { ... on Registration { ${FIELDS} } } }`, {
      privateToken: guest.token,
      variables: { id: registration.id },
    });
    expect(stored.body.data!.node).toEqual(registration);

    // Waitlisted the same way (no seat left), and its attendee ids are those stored.
    const late = await createUserWithToken(t);
    const { answer: waiting } = await failingAfterCommit(/INSERT INTO registrations/, () =>
      mutateRaw(t, late.token, 'registerForEvent', { ...input, attendees: [{ name: 'Late', email: 'late@example.com' }] }, REGISTRATION),
    );
    expect(waiting.body.errors).toBeUndefined();
    expect(registrationOf(waiting)).toMatchObject({
      status: 'WAITLISTED',
      confirmedAt: null,
      ticketType: { remaining: 3 },
      event: { spotsLeft: 0, onlineUrl: null, viewerRegistration: { id: registrationOf(waiting).id, status: 'WAITLISTED' } },
    });

    // A member of the organizer: their role, and the online address whatever their registration's status.
    const { answer: own } = await failingAfterCommit(/INSERT INTO registrations/, () =>
      mutateRaw(t, owner, 'registerForEvent', { ...input, attendees: [{ name: 'Owner', email: 'owner@example.com' }] }, REGISTRATION),
    );
    expect(own.body.errors).toBeUndefined();
    expect(registrationOf(own)).toMatchObject({
      status: 'WAITLISTED',
      event: { onlineUrl: 'https://meet.example.com/room-42', organizer: { viewerRole: 'OWNER' } },
    });
  });

  it('cancelRegistration: the registration with its attendees, ticket type and event as the cancellation left them', async () => {
    const event = await createEvent(t, owner, organizerId, { capacity: 1 });
    const first = await createUserWithToken(t);
    const second = await createUserWithToken(t);
    const registration = registrationOf(await registerFor(t, first.token, event));
    const waiting = registrationOf(await registerFor(t, second.token, event));
    expect(waiting.status).toBe('WAITLISTED');

    const { answer: res } = await failingAfterCommit(/UPDATE registrations r SET status = 'cancelled'/, () =>
      mutateRaw(t, first.token, 'cancelRegistration', { registrationId: registration.id }, REGISTRATION),
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data!.cancelRegistration.registration).toMatchObject({
      id: registration.id,
      status: 'CANCELLED',
      attendees: [{ id: registration.attendees[0].id, name: 'Attendee 1', registration: { id: registration.id, status: 'CANCELLED' } }],
      ticketType: { id: event.ticketTypeId },
      // The freed seat went to the waitlisted registration.
      event: { id: event.id, spotsLeft: 0, onlineUrl: null, viewerRegistration: null, organizer: { viewerRole: null } },
    });

    // Cancelled by the organizer: the owner's own view of the event (a member, not registered).
    const { answer: byOwner } = await failingAfterCommit(/UPDATE registrations r SET status = 'cancelled'/, () =>
      mutateRaw(t, owner, 'cancelRegistration', { registrationId: waiting.id }, REGISTRATION),
    );
    expect(byOwner.body.errors).toBeUndefined();
    expect(byOwner.body.data!.cancelRegistration.registration).toMatchObject({
      id: waiting.id,
      status: 'CANCELLED',
      event: { onlineUrl: 'https://meet.example.com/room-42', viewerRegistration: null, organizer: { viewerRole: 'OWNER' } },
    });
  });

  it('checkInAttendee and undoCheckIn: the attendee with its registration and ticket code', async () => {
    const event = await createEvent(t, owner, organizerId);
    const guest = await createUserWithToken(t);
    const registration = registrationOf(await registerFor(t, guest.token, event));
    const attendeeId = registration.attendees[0].id;
    const selection = 'attendee { id checkedInAt ticketCode registration { id status } }';

    const { answer: checkedIn } = await failingAfterCommit(/UPDATE attendees a SET checked_in_at = \$2/, () =>
      mutateRaw(t, owner, 'checkInAttendee', { attendeeId }, `${selection} alreadyCheckedIn`),
    );
    expect(checkedIn.body.errors).toBeUndefined();
    expect(checkedIn.body.data!.checkInAttendee).toMatchObject({
      attendee: { id: attendeeId, checkedInAt: expect.any(String), registration: { id: registration.id, status: 'CONFIRMED' } },
      alreadyCheckedIn: false,
    });

    const { answer: undone } = await failingAfterCommit(/UPDATE attendees a SET checked_in_at = NULL/, () =>
      mutateRaw(t, owner, 'undoCheckIn', { attendeeId }, selection),
    );
    expect(undone.body.errors).toBeUndefined();
    expect(undone.body.data!.undoCheckIn.attendee).toMatchObject({
      id: attendeeId,
      checkedInAt: null,
      registration: { id: registration.id, status: 'CONFIRMED' },
    });
    // Still checked in or not, as answered.
    await mutate(t, owner, 'checkInAttendee', { attendeeId }, 'alreadyCheckedIn');
  });
});
