import { DataSource } from 'typeorm';
import type { DomainEvent } from '../src/events/domain-events.js';
import { PreparedStatements } from '../src/database/prepared-statements.js';
import { idOfType } from '../src/graphql/global-id.js';
import { createEvent, createOrganizer, mutate, mutateRaw, registerFor, registrationOf } from './support/events.js';
import { createUserWithToken } from './support/fixtures.js';
import { rest } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';

/**
 * What each change of the events domain tells webhooks (issue 28): exactly the expected domain events,
 * as the one `webhook-fan-out` job its transaction wrote (read from pg-boss's job table), and nothing
 * for a change that fails or rolls back.
 */
describe('Domain events for webhooks', () => {
  let t: TestApp;
  let db: DataSource;
  let owner: { id: string; token: string };
  let staff: { id: string; token: string };
  let organizer: { id: string; slug: string };
  let organizerId: string;

  async function userWithToken() {
    const { user, token } = await createUserWithToken(t);
    return { id: user.id, token, username: user.username };
  }

  /** The fan-out jobs `change` wrote, in order: one list of events per transaction. */
  async function emitted(change: () => Promise<unknown>): Promise<DomainEvent[][]> {
    await db.query(`DELETE FROM pgboss.job WHERE name = 'webhook-fan-out'`);
    await change();
    const rows = (await db.query(`SELECT data FROM pgboss.job WHERE name = 'webhook-fan-out' ORDER BY created_on, id`)) as {
      data: { events: DomainEvent[] };
    }[];
    return rows.map((row) => row.data.events);
  }

  const uuid = (globalId: string, type: 'Event' | 'Registration' | 'Attendee') => idOfType(globalId, type)!;
  const at = () => expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

  function registrationEvent(type: string, registrationGid: string, eventGid: string, userId: string) {
    return {
      type,
      occurredAt: at(),
      organizerId,
      eventId: uuid(eventGid, 'Event'),
      registrationId: uuid(registrationGid, 'Registration'),
      userId,
    };
  }

  beforeAll(async () => {
    t = await startTestApp();
    db = t.get(DataSource);
    owner = await userWithToken();
    const s = await userWithToken();
    staff = s;
    organizer = await createOrganizer(t, owner.token);
    organizerId = idOfType(organizer.id, 'Organizer')!;
    await mutate(
      t,
      owner.token,
      'addOrganizerMember',
      { organizerId: organizer.id, username: s.username, role: 'CHECK_IN_STAFF' },
      'member { role }',
    );
  });
  afterAll(() => t.close());

  describe('registrations', () => {
    it('register: registration.created then registration.confirmed, or registration.waitlisted when full, in one job', async () => {
      const event = await createEvent(t, owner.token, organizer.id, { capacity: 1 });
      const first = await userWithToken();
      const second = await userWithToken();
      let confirmed: { id: string } | undefined;
      const jobs = await emitted(async () => (confirmed = registrationOf(await registerFor(t, first.token, event))));
      expect(jobs).toEqual([
        [
          registrationEvent('registration.created', confirmed!.id, event.id, first.id),
          registrationEvent('registration.confirmed', confirmed!.id, event.id, first.id),
        ],
      ]);
      expect(jobs[0]![0]!.occurredAt).toBe(jobs[0]![1]!.occurredAt);

      let waitlisted: { id: string } | undefined;
      expect(await emitted(async () => (waitlisted = registrationOf(await registerFor(t, second.token, event))))).toEqual([
        [
          registrationEvent('registration.created', waitlisted!.id, event.id, second.id),
          registrationEvent('registration.waitlisted', waitlisted!.id, event.id, second.id),
        ],
      ]);

      // Cancelling the confirmed one frees its seat: the waitlisted one is promoted, in the same job.
      expect(
        await emitted(() => mutate(t, first.token, 'cancelRegistration', { registrationId: confirmed!.id }, 'registration { status }')),
      ).toEqual([
        [
          registrationEvent('registration.cancelled', confirmed!.id, event.id, first.id),
          registrationEvent('registration.promoted', waitlisted!.id, event.id, second.id),
        ],
      ]);

      // An organizer's cancellation is a registration.cancelled too (its seat goes back; nobody waits).
      expect(
        await emitted(() => mutate(t, owner.token, 'cancelRegistration', { registrationId: waitlisted!.id }, 'registration { status }')),
      ).toEqual([[registrationEvent('registration.cancelled', waitlisted!.id, event.id, second.id)]]);
    });

    it('a refused registration, and one whose transaction rolls back after emitting, write nothing', async () => {
      const event = await createEvent(t, owner.token, organizer.id);
      const someone = await userWithToken();
      registrationOf(await registerFor(t, someone.token, event));
      const twice = await emitted(async () => {
        const res = await registerFor(t, someone.token, event);
        expect(res.body.data!.registerForEvent.userErrors[0]).toMatchObject({ code: 'ALREADY_REGISTERED' });
      });
      expect(twice).toEqual([]);

      // The failure comes after the outbox wrote its job, inside the same transaction: nothing remains.
      // A registration is one statement (its own transaction, with its jobs): it fails once its fan-out job is written.
      const statements = t.get(PreparedStatements);
      const query = statements.query;
      const other = await userWithToken();
      statements.query = (statement, values) =>
        query.call(
          statements,
          statement.name.startsWith('registration-claim')
            ? { ...statement, text: `${statement.text} WHERE (SELECT count(*) FROM fan_out) / (random() * 0)::int > 0` }
            : statement,
          values,
        ) as never;
      try {
        const rolledBack = await emitted(async () => {
          const res = await registerFor(t, other.token, event);
          expect(res.body.errors?.[0]?.extensions?.code).toBe('INTERNAL_SERVER_ERROR');
        });
        expect(rolledBack).toEqual([]);
      } finally {
        statements.query = query;
      }
      const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM registrations WHERE user_id = $1`, [other.id])) as [{ n: number }];
      expect(n).toBe(0);
    });
  });

  describe('check-in', () => {
    let event: { id: string; ticketTypeId: string };
    let registrant: { id: string; token: string };
    let registration: { id: string; attendees: { id: string }[] };

    beforeAll(async () => {
      event = await createEvent(t, owner.token, organizer.id);
      registrant = await userWithToken();
      registration = registrationOf(await registerFor(t, registrant.token, event, 2));
    });

    const attendeeEvent = (type: string, attendeeGid: string) => ({
      ...registrationEvent(type, registration.id, event.id, registrant.id),
      attendeeId: uuid(attendeeGid, 'Attendee'),
    });

    it('checkIn: attendee.checked_in the first time only; undoCheckIn: attendee.check_in_undone, once', async () => {
      const attendeeId = registration.attendees[0]!.id;
      const checkIn = () =>
        mutate(t, staff.token, 'checkInAttendee', { attendeeId }, 'attendee { checkedInAt } alreadyCheckedIn') as Promise<{
          attendee: { checkedInAt: string | null };
          alreadyCheckedIn: boolean;
        }>;
      expect(await emitted(checkIn)).toEqual([[attendeeEvent('attendee.checked_in', attendeeId)]]);
      expect(await emitted(checkIn)).toEqual([]);

      const undo = () => mutate(t, staff.token, 'undoCheckIn', { attendeeId }, 'attendee { id checkedInAt }');
      let undone: { attendee: { id: string; checkedInAt: string | null } } | undefined;
      expect(await emitted(async () => (undone = await undo()))).toEqual([[attendeeEvent('attendee.check_in_undone', attendeeId)]]);
      expect(undone!.attendee).toEqual({ id: attendeeId, checkedInAt: null });
      // Idempotent: not checked in any more, it answers the attendee as is and emits nothing.
      expect(await emitted(undo)).toEqual([]);
      const [row] = (await db.query(`SELECT checked_in_at FROM attendees WHERE id = $1`, [uuid(attendeeId, 'Attendee')])) as {
        checked_in_at: Date | null;
      }[];
      expect(row!.checked_in_at).toBeNull();

      // Checked in again after the undo: a new attendee.checked_in.
      const again = await emitted(checkIn);
      expect(again).toEqual([[attendeeEvent('attendee.checked_in', attendeeId)]]);
    });

    it('undoCheckIn is for the organizer’s members: NOT_FOUND or FORBIDDEN for others, and emits nothing', async () => {
      const attendeeId = registration.attendees[1]!.id;
      await mutate(t, owner.token, 'checkInAttendee', { attendeeId }, 'attendee { checkedInAt }');
      const stranger = await userWithToken();
      const jobs = await emitted(async () => {
        const theirs = await mutateRaw(t, stranger.token, 'undoCheckIn', { attendeeId }, 'attendee { id }');
        expect(theirs.body.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', reason: 'ATTENDEE_NOT_FOUND' });
        // The registrant sees the attendee, but may not undo its check-in.
        const own = await mutateRaw(t, registrant.token, 'undoCheckIn', { attendeeId }, 'attendee { id }');
        expect(own.body.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });
      });
      expect(jobs).toEqual([]);
    });

    it('REST: POST /api/attendees/:id/check_in and /undo_check_in emit the same events', async () => {
      const other = await userWithToken();
      const otherRegistration = registrationOf(await registerFor(t, other.token, event));
      const attendeeGid = otherRegistration.attendees[0].id as string;
      const attendeeId = uuid(attendeeGid, 'Attendee');
      const expected = (type: string) => ({
        ...registrationEvent(type, otherRegistration.id, event.id, other.id),
        attendeeId,
      });

      let checkedIn: Awaited<ReturnType<typeof rest>> | undefined;
      expect(
        await emitted(
          async () => (checkedIn = await rest(t.url, 'POST', `/api/attendees/${attendeeId}/check_in`, { privateToken: staff.token })),
        ),
      ).toEqual([[expected('attendee.checked_in')]]);
      expect(checkedIn!.status).toBe(200);

      let undone: Awaited<ReturnType<typeof rest>> | undefined;
      expect(
        await emitted(
          async () => (undone = await rest(t.url, 'POST', `/api/attendees/${attendeeId}/undo_check_in`, { privateToken: staff.token })),
        ),
      ).toEqual([[expected('attendee.check_in_undone')]]);
      expect(undone!.status).toBe(200);
      expect(undone!.body).toEqual({
        id: attendeeId,
        registration_id: uuid(otherRegistration.id, 'Registration'),
        name: 'Attendee 1',
        email: 'attendee1@example.com',
        checked_in_at: null,
      });
      expect(undone!.headers.get('deprecation')).not.toBeNull();

      const repeat = await emitted(async () => {
        const res = await rest(t.url, 'POST', `/api/attendees/${attendeeId}/undo_check_in`, { privateToken: staff.token });
        expect(res.status).toBe(200);
        expect(res.body.checked_in_at).toBeNull();
      });
      expect(repeat).toEqual([]);

      const stranger = await userWithToken();
      const refused = await rest(t.url, 'POST', `/api/attendees/${attendeeId}/undo_check_in`, { privateToken: stranger.token });
      expect(refused.status).toBe(404);
      const malformed = await rest(t.url, 'POST', `/api/attendees/not-a-uuid/undo_check_in`, { privateToken: staff.token });
      expect(malformed.status).toBe(404);
    });
  });

  describe('events', () => {
    const eventEvent = (type: string, eventGid: string) => ({ type, occurredAt: at(), organizerId, eventId: uuid(eventGid, 'Event') });

    it('publish: event.published; an update of a published event: event.changed when something changed; a draft’s: nothing', async () => {
      const event = await createEvent(t, owner.token, organizer.id, { publish: false });
      expect(
        await emitted(() => mutate(t, owner.token, 'updateEvent', { eventId: event.id, title: 'Still a draft' }, 'event { id }')),
      ).toEqual([]);
      expect(await emitted(() => mutate(t, owner.token, 'publishEvent', { eventId: event.id }, 'event { status }'))).toEqual([
        [eventEvent('event.published', event.id)],
      ]);
      const twice = await emitted(async () => {
        const res = await mutateRaw(t, owner.token, 'publishEvent', { eventId: event.id }, 'event { status }');
        expect(res.body.data!.publishEvent.userErrors[0]).toMatchObject({ code: 'EVENT_NOT_DRAFT' });
      });
      expect(twice).toEqual([]);

      expect(
        await emitted(() => mutate(t, owner.token, 'updateEvent', { eventId: event.id, description: 'Now with a talk' }, 'event { id }')),
      ).toEqual([[eventEvent('event.changed', event.id)]]);
      // The same values again: nothing changed, nothing emitted.
      expect(
        await emitted(() => mutate(t, owner.token, 'updateEvent', { eventId: event.id, description: 'Now with a talk' }, 'event { id }')),
      ).toEqual([]);
    });

    it('a raised capacity: registration.promoted for each registration it confirms, and event.changed, in one job', async () => {
      const event = await createEvent(t, owner.token, organizer.id, { capacity: 1 });
      const [a, b, c] = [await userWithToken(), await userWithToken(), await userWithToken()];
      registrationOf(await registerFor(t, a.token, event));
      const waitingB = registrationOf(await registerFor(t, b.token, event));
      const waitingC = registrationOf(await registerFor(t, c.token, event));
      expect(await emitted(() => mutate(t, owner.token, 'updateEvent', { eventId: event.id, capacity: 3 }, 'event { id }'))).toEqual([
        [
          registrationEvent('registration.promoted', waitingB.id, event.id, b.id),
          registrationEvent('registration.promoted', waitingC.id, event.id, c.id),
          eventEvent('event.changed', event.id),
        ],
      ]);
    });

    it('a raised ticket quantity: registration.promoted (a ticket type’s change is no event.changed)', async () => {
      const event = await createEvent(t, owner.token, organizer.id, { capacity: null, quantity: 1 });
      const [a, b] = [await userWithToken(), await userWithToken()];
      registrationOf(await registerFor(t, a.token, event));
      const waiting = registrationOf(await registerFor(t, b.token, event));
      expect(
        await emitted(() =>
          mutate(t, owner.token, 'updateTicketType', { ticketTypeId: event.ticketTypeId, quantity: 2 }, 'ticketType { id }'),
        ),
      ).toEqual([[registrationEvent('registration.promoted', waiting.id, event.id, b.id)]]);
    });

    it('cancel: event.cancelled alone, not a registration.cancelled per registration it ends', async () => {
      const event = await createEvent(t, owner.token, organizer.id, { capacity: 1 });
      const [a, b] = [await userWithToken(), await userWithToken()];
      registrationOf(await registerFor(t, a.token, event));
      registrationOf(await registerFor(t, b.token, event));
      expect(await emitted(() => mutate(t, owner.token, 'cancelEvent', { eventId: event.id }, 'event { status }'))).toEqual([
        [eventEvent('event.cancelled', event.id)],
      ]);
      const [{ n }] = (await db.query(
        `SELECT count(*)::int AS n FROM registrations WHERE event_id = $1 AND cancelled_by = 'event_cancelled'`,
        [uuid(event.id, 'Event')],
      )) as [{ n: number }];
      expect(n).toBe(2);
    });
  });
});
