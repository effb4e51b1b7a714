import { DataSource, EntityTarget } from 'typeorm';
import { AttendeeEntity } from '../src/events/attendee.entity.js';
import { EventEntity } from '../src/events/event.entity.js';
import { EntityTable } from '../src/database/entity-table.js';
import { EventTables } from '../src/events/event-tables.js';
import { OrganizerMemberEntity } from '../src/events/organizer-member.entity.js';
import { OrganizerEntity } from '../src/events/organizer.entity.js';
import { RegistrationEntity } from '../src/events/registration.entity.js';
import { TicketTypeEntity } from '../src/events/ticket-type.entity.js';
import { createUserWithToken } from './support/fixtures.js';
import { createEvent, createOrganizer, registerFor, registrationOf } from './support/events.js';
import { graphql } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';

describe('Events data access: columns from the entities, a request cache the writes keep fresh', () => {
  let t: TestApp;
  let owner: string;
  let organizerId: string;

  beforeAll(async () => {
    t = await startTestApp();
    owner = (await createUserWithToken(t)).token;
    organizerId = (await createOrganizer(t, owner, { websiteUrl: 'https://example.com' })).id;
  });
  afterAll(() => t.close());

  it('reads every column of every events table, as the entity declares it, into the model', async () => {
    const event = await createEvent(t, owner, organizerId, { capacity: 10 });
    registrationOf(await registerFor(t, (await createUserWithToken(t)).token, event, 2));
    const dataSource = t.get(DataSource);
    const tables = t.get(EventTables);
    const cases: [EntityTarget<unknown>, EntityTable<object>][] = [
      [OrganizerEntity, tables.organizers],
      [OrganizerMemberEntity, tables.members],
      [EventEntity, tables.events],
      [TicketTypeEntity, tables.ticketTypes],
      [RegistrationEntity, tables.registrations],
      [AttendeeEntity, tables.attendees],
    ];
    for (const [entity, table] of cases) {
      const metadata = dataSource.getMetadata(entity);
      // The table as the migrations built it has exactly the entity's columns…
      const stored = (await dataSource.query(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
        [metadata.tableName],
      )) as { column_name: string }[];
      const columns = metadata.columns.map((c) => c.databaseName);
      expect(stored.map((c) => c.column_name).sort()).toEqual([...columns].sort());
      // …the services select every one of them…
      expect(table.select.split(', ')).toEqual(columns.map((c) => `${table.alias}.${c}`));
      // …and each lands in the model under its property (the venue_* columns as the event's venue).
      const [row] = (await dataSource.query(`SELECT ${table.select} FROM ${metadata.tableName} ${table.alias} LIMIT 1`)) as Record<
        string,
        unknown
      >[];
      const model = table.map(row!) as Record<string, unknown>;
      const properties = metadata.columns.map((c) => c.propertyName);
      const venue = ['venueName', 'venueAddress', 'venueCity', 'venueCountry'];
      const expected = entity === EventEntity ? [...properties.filter((p) => !venue.includes(p)), 'venue'] : properties;
      expect(Object.keys(model).sort()).toEqual(expected.sort());
      for (const c of metadata.columns) {
        if (entity === EventEntity && venue.includes(c.propertyName)) continue;
        const value = model[c.propertyName];
        if (value === null) expect(c.isNullable).toBe(true);
        else if (['timestamptz', 'timestamp'].includes(c.type as string)) expect(value).toBeInstanceOf(Date);
        else if (['integer', 'bigint'].includes(c.type as string)) expect(typeof value).toBe('number');
        else expect(value).toBe(row![c.databaseName]);
      }
    }
    const [eventRow] = (await dataSource.query(`SELECT ${tables.events.select} FROM events e WHERE e.slug = $1`, [event.slug])) as Record<
      string,
      unknown
    >[];
    expect(tables.events.map(eventRow!)).toMatchObject({
      confirmedSeats: 2,
      capacity: 10,
      venue: { name: 'La Gaîté Lyrique', address: '3bis rue Papin', city: 'Paris', country: 'FR' },
    });
  });

  it('shows, later in the same request, what a mutation changed: the event, its seats and its ticket type', async () => {
    const event = await createEvent(t, owner, organizerId, { capacity: 10, quantity: 5 });
    const res = await graphql(
      t.url,
      `
        mutation ($update: UpdateEventInput!, $register: RegisterForEventInput!) {
          updateEvent(input: $update) {
            event {
              title
            }
            userErrors {
              code
            }
          }
          registerForEvent(input: $register) {
            registration {
              event {
                title
                spotsLeft
                ticketTypes {
                  remaining
                }
              }
              ticketType {
                remaining
              }
            }
            userErrors {
              code
            }
          }
        }
      `,
      {
        privateToken: owner,
        variables: {
          update: { eventId: event.id, title: 'Renamed in the same request' },
          register: { eventId: event.id, ticketTypeId: event.ticketTypeId, attendees: [{ name: 'Ada', email: 'ada@example.com' }] },
        },
      },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data?.registerForEvent).toEqual({
      registration: {
        event: { title: 'Renamed in the same request', spotsLeft: 9, ticketTypes: [{ remaining: 4 }] },
        ticketType: { remaining: 4 },
      },
      userErrors: [],
    });
  });

  const onServer = !!process.env.DATABASE_URL;
  (onServer ? it : it.skip)('runs the prepared statements on the same pool as TypeORM: one connection budget per process', async () => {
    const listing = () => graphql(t.url, '{ events(first: 50) { nodes { id organizer { name } ticketTypes { name } } } }');
    await Promise.all(Array.from({ length: 40 }, listing));
    const [{ count }] = (await t
      .get(DataSource)
      .query(`SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'agora'`)) as [
      { count: number },
    ];
    expect(count).toBeGreaterThan(1);
    expect(count).toBeLessThanOrEqual(t.config.database.poolSize);
  });
});
