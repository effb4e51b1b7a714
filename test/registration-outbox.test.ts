import { DataSource } from 'typeorm';
import { PreparedStatements, Statement } from '../src/database/prepared-statements.js';
import { createEvent, createOrganizer, mutate, mutateRaw, registerFor, registrationOf } from './support/events.js';
import { createUserWithToken } from './support/fixtures.js';
import { startTestApp, TestApp } from './support/test-app.js';

/**
 * A registration's claim is one statement that writes the registration and its mail and webhook jobs
 * (the transactional outbox). PostgreSQL runs every data-modifying part of a statement to its end: when
 * the claim writes no registration (the event or the ticket type changed since the request read them),
 * it must write no job either, or the jobs commit with no data and fail (or worse) when they run.
 */
describe('A registration that writes nothing writes no job', () => {
  let t: TestApp;
  let owner: string;
  let organizerId: string;

  beforeAll(async () => {
    t = await startTestApp();
    owner = (await createUserWithToken(t)).token;
    organizerId = (await createOrganizer(t, owner)).id;
  });
  afterAll(() => t.close());

  /** Runs `change` once, right before the next registration claim runs (after the request read the event). */
  function beforeNextClaim(change: () => Promise<unknown>): void {
    const statements = t.get(PreparedStatements);
    const original = statements.query.bind(statements);
    statements.query = async <R extends Record<string, unknown>>(statement: Statement, values: unknown[]): Promise<R[]> => {
      if (statement.name.startsWith('registration-claim')) {
        statements.query = original;
        await change();
      }
      return original<R>(statement, values);
    };
  }

  async function jobsWithoutData(): Promise<number> {
    const [row] = (await t
      .get(DataSource)
      .query(`SELECT count(*)::int AS n FROM pgboss.job WHERE data IS NULL OR data = 'null'::jsonb`)) as {
      n: number;
    }[];
    return row!.n;
  }

  it('the event cancelled between the request reading it and the claim: EVENT_CANCELLED, and no job', async () => {
    const event = await createEvent(t, owner, organizerId, { capacity: 10 });
    const guest = await createUserWithToken(t);
    beforeNextClaim(() => mutate(t, owner, 'cancelEvent', { eventId: event.id }, 'event { id status }'));
    const res = await registerFor(t, guest.token, event);
    expect(res.body.data!.registerForEvent.userErrors).toMatchObject([{ code: 'EVENT_CANCELLED' }]);
    expect(await jobsWithoutData()).toBe(0);
  });

  it('the ticket type deleted between the request reading it and the claim: NOT_FOUND, and no job', async () => {
    const event = await createEvent(t, owner, organizerId, { capacity: 10 });
    const guest = await createUserWithToken(t);
    beforeNextClaim(() => mutate(t, owner, 'deleteTicketType', { ticketTypeId: event.ticketTypeId }, 'deletedTicketTypeId'));
    const res = await registerFor(t, guest.token, event);
    expect(res.body.errors).toMatchObject([{ extensions: { code: 'NOT_FOUND', reason: 'TICKET_TYPE_NOT_FOUND' } }]);
    expect(await jobsWithoutData()).toBe(0);
  });

  it('a seat freed between the request reading the event full and the claim: confirmed, with its jobs only', async () => {
    const event = await createEvent(t, owner, organizerId, { capacity: 1 });
    const first = await createUserWithToken(t);
    const taken = registrationOf(await registerFor(t, first.token, event));
    const guest = await createUserWithToken(t);
    beforeNextClaim(() => mutate(t, first.token, 'cancelRegistration', { registrationId: taken.id }, 'registration { id }'));
    const res = await mutateRaw(
      t,
      guest.token,
      'registerForEvent',
      { eventId: event.id, ticketTypeId: event.ticketTypeId, attendees: [{ name: 'Ada', email: 'ada@example.com' }] },
      'registration { id status }',
    );
    const registration = registrationOf(res);
    expect(registration.status).toBe('CONFIRMED');
    expect(await jobsWithoutData()).toBe(0);
  });
});
