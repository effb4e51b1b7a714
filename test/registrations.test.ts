import { DataSource } from 'typeorm';
import { createUserWithToken } from './support/fixtures.js';
import {
  createEvent,
  createManyUsersWithTokens,
  createOrganizer,
  mutate,
  mutateRaw,
  registerFor,
  registrationOf,
} from './support/events.js';
import { graphql, rest } from './support/http.js';
import { idOfType } from '../src/graphql/global-id.js';
import { startTestApp, TestApp } from './support/test-app.js';

describe('Registrations: capacity, waitlist and per-order limits', () => {
  let t: TestApp;
  let owner: string;
  let organizerId: string;

  beforeAll(async () => {
    // The races below send 200 requests at once to a pool of 10 connections, whose mail jobs run beside
    // them: they count seats, so a loaded machine must queue them rather than shed them (503 after 2 s).
    t = await startTestApp({ DATABASE_POOL_WAIT_TIMEOUT_MS: '30000' });
    owner = (await createUserWithToken(t)).token;
    organizerId = (await createOrganizer(t, owner)).id;
  });
  afterAll(() => t.close());

  const counts = async (eventId: string) => {
    const res = await graphql(
      t.url,
      `
        query ($id: ID!) {
          event(id: $id) {
            spotsLeft
            confirmed: registrations(first: 100, status: CONFIRMED) {
              nodes {
                id
              }
            }
            waitlisted: registrations(first: 100, status: WAITLISTED) {
              nodes {
                id
              }
              pageInfo {
                hasNextPage
              }
            }
          }
        }
      `,
      { privateToken: owner, variables: { id: eventId } },
    );
    return res.body.data?.event;
  };

  it('never oversells: 200 concurrent registrations for 50 seats give exactly 50 confirmed and 150 waitlisted', async () => {
    const event = await createEvent(t, owner, organizerId, { capacity: 50 });
    const users = await createManyUsersWithTokens(t, 200);
    const results = await Promise.all(users.map((u) => registerFor(t, u.token, event)));

    const statuses = results.map((res) => registrationOf(res).status);
    expect(statuses.filter((s) => s === 'CONFIRMED')).toHaveLength(50);
    expect(statuses.filter((s) => s === 'WAITLISTED')).toHaveLength(150);

    const [row] = await t.get(DataSource).query(
      `SELECT e.confirmed_seats, t.sold,
              (SELECT count(*)::int FROM registrations r WHERE r.event_id = e.id AND r.status = 'confirmed') AS confirmed,
              (SELECT count(*)::int FROM attendees a JOIN registrations r ON r.id = a.registration_id WHERE r.event_id = e.id AND r.status = 'confirmed') AS seated
         FROM events e JOIN ticket_types t ON t.event_id = e.id WHERE e.slug = $1`,
      [event.slug],
    );
    expect(row).toEqual({ confirmed_seats: 50, sold: 50, confirmed: 50, seated: 50 });
    const view = await counts(event.id);
    expect(view.spotsLeft).toBe(0);
    expect(view.confirmed.nodes).toHaveLength(50);
  }, 120_000);

  it('holds a ticket type quantity the same way, under concurrency, with multi-ticket orders', async () => {
    const event = await createEvent(t, owner, organizerId, { capacity: null, quantity: 10, maxPerOrder: 3 });
    const users = await createManyUsersWithTokens(t, 12);
    const results = await Promise.all(users.map((u) => registerFor(t, u.token, event, 3)));
    const confirmed = results.filter((res) => registrationOf(res).status === 'CONFIRMED');
    // 3 orders of 3 fit in 10; the 10th ticket stays free because no waiting order fits in it.
    expect(confirmed).toHaveLength(3);
    const [row] = await t
      .get(DataSource)
      .query(`SELECT sold FROM ticket_types t JOIN events e ON e.id = t.event_id WHERE e.slug = $1`, [event.slug]);
    expect(row.sold).toBe(9);
  }, 60_000);

  it('promotes the oldest waitlisted registration when a seat frees up, in order', async () => {
    const event = await createEvent(t, owner, organizerId, { capacity: 2 });
    const people = await createManyUsersWithTokens(t, 5);
    const regs = [];
    for (const person of people) regs.push(registrationOf(await registerFor(t, person.token, event)));
    expect(regs.map((r) => r.status)).toEqual(['CONFIRMED', 'CONFIRMED', 'WAITLISTED', 'WAITLISTED', 'WAITLISTED']);

    const cancel = (token: string, registrationId: string) =>
      mutate(t, token, 'cancelRegistration', { registrationId }, 'registration { status cancelledAt }');
    expect((await cancel(people[0]!.token, regs[0].id)).registration.status).toBe('CANCELLED');
    const status = async (token: string, id: string) =>
      (
        await graphql(
          t.url,
          `
            query ($id: ID!) {
              node(id: $id) {
                ... on Registration {
                  status
                  confirmedAt
                }
              }
            }
          `,
          { privateToken: token, variables: { id } },
        )
      ).body.data?.node.status;
    expect(await status(people[2]!.token, regs[2].id)).toBe('CONFIRMED');
    expect(await status(people[3]!.token, regs[3].id)).toBe('WAITLISTED');

    // The organizer cancels someone's registration: the next in line gets the seat.
    await cancel(owner, regs[1].id);
    expect(await status(people[3]!.token, regs[3].id)).toBe('CONFIRMED');
    expect(await status(people[4]!.token, regs[4].id)).toBe('WAITLISTED');

    // Cancelling a waitlisted registration frees nothing; raising the capacity confirms the rest.
    await mutate(t, owner, 'updateEvent', { eventId: event.id, capacity: 3 }, 'event { capacity spotsLeft }');
    expect(await status(people[4]!.token, regs[4].id)).toBe('CONFIRMED');
    const lower = await mutateRaw(t, owner, 'updateEvent', { eventId: event.id, capacity: 1 }, 'event { id }');
    expect(lower.body.data?.updateEvent.userErrors[0]).toMatchObject({ code: 'CAPACITY_BELOW_CONFIRMED', field: ['input', 'capacity'] });

    const again = await mutateRaw(t, people[0]!.token, 'cancelRegistration', { registrationId: regs[0].id }, 'registration { id }');
    expect(again.body.data?.cancelRegistration.userErrors[0]).toMatchObject({ code: 'ALREADY_CANCELLED' });
    const notTheirs = await mutateRaw(t, people[0]!.token, 'cancelRegistration', { registrationId: regs[2].id }, 'registration { id }');
    expect(notTheirs.body.errors?.[0].extensions?.code).toBe('NOT_FOUND');
  });

  it('enforces per-order limits and one active registration per person', async () => {
    const event = await createEvent(t, owner, organizerId, { maxPerOrder: 2 });
    const { token } = await createUserWithToken(t);
    const tooMany = await registerFor(t, token, event, 3);
    expect(tooMany.body.data?.registerForEvent.userErrors).toEqual([
      {
        field: ['input', 'attendees'],
        message: 'This ticket type is sold 1 to 2 per registration: give that many attendees.',
        code: 'INVALID_ATTENDEES',
      },
    ]);
    const badEmail = await mutateRaw(
      t,
      token,
      'registerForEvent',
      { eventId: event.id, ticketTypeId: event.ticketTypeId, attendees: [{ name: 'Ada', email: 'not-an-email' }] },
      'registration { id }',
    );
    expect(badEmail.body.data?.registerForEvent.userErrors[0]).toMatchObject({
      field: ['input', 'attendees', '0', 'email'],
      code: 'INVALID_EMAIL',
    });
    const twoWrong = await mutateRaw(
      t,
      token,
      'registerForEvent',
      {
        eventId: event.id,
        ticketTypeId: event.ticketTypeId,
        attendees: [
          { name: ' ', email: 'ada@example.com' },
          { name: 'Grace', email: 'grace@' },
        ],
      },
      'registration { id }',
    );
    expect(twoWrong.body.data?.registerForEvent.userErrors.map((e: { field: string[] }) => e.field.join('.'))).toEqual([
      'input.attendees.0.name',
      'input.attendees.1.email',
    ]);
    registrationOf(await registerFor(t, token, event, 2));
    const twice = await registerFor(t, token, event, 1);
    expect(twice.body.data?.registerForEvent.userErrors[0]).toMatchObject({ code: 'ALREADY_REGISTERED' });
  });

  it('refuses registration outside the sales window and for hidden ticket types', async () => {
    const event = await createEvent(t, owner, organizerId);
    const later = new Date(t.clock.now().getTime() + 86_400_000).toISOString();
    const { ticketType } = await mutate(
      t,
      owner,
      'createTicketType',
      { eventId: event.id, name: 'Late bird', price: { amount: 2500, currency: 'EUR' }, salesStartAt: later },
      'ticketType { id onSale }',
    );
    expect(ticketType.onSale).toBe(false);
    const { token } = await createUserWithToken(t);
    const early = await registerFor(t, token, { id: event.id, ticketTypeId: ticketType.id });
    expect(early.body.data?.registerForEvent.userErrors[0]).toMatchObject({ code: 'SALES_NOT_STARTED' });

    const { ticketType: hidden } = await mutate(
      t,
      owner,
      'createTicketType',
      { eventId: event.id, name: 'Crew', price: { amount: 0, currency: 'EUR' }, hidden: true },
      'ticketType { id }',
    );
    const sneaky = await registerFor(t, token, { id: event.id, ticketTypeId: hidden.id });
    expect(sneaky.body.errors?.[0].extensions).toMatchObject({ code: 'NOT_FOUND', reason: 'TICKET_TYPE_NOT_FOUND' });
  });
});

describe('Registrations: lifecycle', () => {
  let t: TestApp;
  let owner: string;
  let organizerId: string;

  beforeAll(async () => {
    t = await startTestApp();
    owner = (await createUserWithToken(t)).token;
    organizerId = (await createOrganizer(t, owner)).id;
  });
  afterAll(() => t.close());

  const registrations = async (eventId: string) =>
    (
      await graphql(
        t.url,
        `
          query ($id: ID!) {
            event(id: $id) {
              status
              spotsLeft
              registrations(first: 100) {
                nodes {
                  id
                  status
                  cancelledAt
                  cancelledBy
                }
              }
            }
          }
        `,
        { privateToken: owner, variables: { id: eventId } },
      )
    ).body.data?.event;

  const cancel = (token: string, registrationId: string) =>
    mutateRaw(t, token, 'cancelRegistration', { registrationId }, 'registration { status cancelledAt cancelledBy }');

  it('ends the confirmed and waitlisted registrations of a cancelled event, and its seats and tickets count zero', async () => {
    const event = await createEvent(t, owner, organizerId, { capacity: 2, quantity: 5 });
    const people = await createManyUsersWithTokens(t, 4);
    const regs = [];
    for (const person of people) regs.push(registrationOf(await registerFor(t, person.token, event)));
    expect(regs.map((r) => r.status)).toEqual(['CONFIRMED', 'CONFIRMED', 'WAITLISTED', 'WAITLISTED']);
    // One registrant had already left; the cancellation keeps what they did and when.
    const left = (await cancel(people[3]!.token, regs[3].id)).body.data?.cancelRegistration.registration;
    expect(left).toMatchObject({ status: 'CANCELLED', cancelledBy: 'ATTENDEE' });
    t.clock.advance(60_000);

    const cancelled = await mutate(t, owner, 'cancelEvent', { eventId: event.id }, 'event { status spotsLeft }');
    expect(cancelled.event).toEqual({ status: 'CANCELLED', spotsLeft: 2 });
    const after = await registrations(event.id);
    const byId = new Map(after.registrations.nodes.map((r: { id: string }) => [r.id, r]));
    for (const reg of regs.slice(0, 3)) {
      expect(byId.get(reg.id)).toMatchObject({ status: 'CANCELLED', cancelledBy: 'EVENT_CANCELLED', cancelledAt: expect.any(String) });
    }
    expect(byId.get(regs[3].id)).toEqual({ id: regs[3].id, status: 'CANCELLED', cancelledAt: left.cancelledAt, cancelledBy: 'ATTENDEE' });

    const [row] = await t.get(DataSource).query(
      `SELECT e.confirmed_seats, t.sold,
              (SELECT count(*)::int FROM registrations r WHERE r.event_id = e.id AND r.status <> 'cancelled') AS active
         FROM events e JOIN ticket_types t ON t.event_id = e.id WHERE e.slug = $1`,
      [event.slug],
    );
    expect(row).toEqual({ confirmed_seats: 0, sold: 0, active: 0 });

    // REST shows the same, to the registrant.
    const restView = await rest(t.url, 'GET', `/api/registrations/${idOfType(regs[0].id, 'Registration')}`, {
      privateToken: people[0]!.token,
    });
    expect(restView.body).toMatchObject({ status: 'cancelled', cancelled_by: 'event_cancelled', cancelled_at: expect.any(String) });
    // Nothing is left to cancel, and the event stays cancelled.
    expect((await cancel(people[0]!.token, regs[0].id)).body.data?.cancelRegistration.userErrors[0]).toMatchObject({
      code: 'ALREADY_CANCELLED',
    });
  });

  it('refuses the registrant a cancellation once an attendee has checked in; the organizer may, and the seat goes to the waitlist', async () => {
    const event = await createEvent(t, owner, organizerId, { capacity: 2 });
    const [guest, waiting] = await createManyUsersWithTokens(t, 2);
    const reg = registrationOf(await registerFor(t, guest!.token, event, 2));
    const queued = registrationOf(await registerFor(t, waiting!.token, event));
    expect([reg.status, queued.status]).toEqual(['CONFIRMED', 'WAITLISTED']);
    await mutate(t, owner, 'checkInAttendee', { attendeeId: reg.attendees[1].id }, 'attendee { checkedInAt }');

    const refused = await cancel(guest!.token, reg.id);
    expect(refused.body.data?.cancelRegistration).toEqual({
      registration: null,
      userErrors: [
        {
          field: ['input', 'registrationId'],
          message: 'An attendee of this registration has checked in: only the organizer can cancel it now.',
          code: 'CHECKED_IN',
        },
      ],
    });
    const restRefused = await rest(t.url, 'POST', `/api/registrations/${idOfType(reg.id, 'Registration')}/cancel`, {
      privateToken: guest!.token,
    });
    expect(restRefused.status).toBe(409);
    expect(restRefused.body.code).toBe('CHECKED_IN');
    expect((await registrations(event.id)).spotsLeft).toBe(0);

    const byOrganizer = await cancel(owner, reg.id);
    expect(byOrganizer.body.data?.cancelRegistration.registration).toMatchObject({ status: 'CANCELLED', cancelledBy: 'ORGANIZER' });
    const after = await registrations(event.id);
    expect(after.registrations.nodes.find((r: { id: string }) => r.id === queued.id).status).toBe('CONFIRMED');
  });
});
