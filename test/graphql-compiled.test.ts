import { DataSource } from 'typeorm';
import { createOrganizer, createEvent } from './support/events.js';
import { createUserWithToken } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';

// A document runs uncompiled (graphql-js) the first time Apollo sees it and compiled (graphql-jit) from
// the second time on: each must answer exactly as the first time, errors and statuses included.

let t: TestApp;
let owner: string;
let stranger: string;
let eventId: string;
beforeAll(async () => {
  t = await startTestApp();
  ({ token: owner } = await createUserWithToken(t, ['api']));
  ({ token: stranger } = await createUserWithToken(t, ['api']));
  const organizer = await createOrganizer(t, owner);
  ({ id: eventId } = await createEvent(t, owner, organizer.id));
  await createEvent(t, owner, organizer.id, { format: 'ONLINE', capacity: null });
});
afterAll(() => t.close());

async function threeTimes(query: string, options: Parameters<typeof graphql>[2] = {}) {
  const runs = [];
  for (let i = 0; i < 3; i++) {
    const res = await graphql(t.url, query, options);
    runs.push({ status: res.status, body: res.body });
  }
  return runs;
}

const LISTING = `query Upcoming($after: DateTime!, $first: Int) {
  events(first: $first, filter: { startsAfter: $after }) {
    nodes { id title startsAt endsAt timeZone format venue { name city country } spotsLeft phase
      organizer { name slug viewerRole } ticketTypes { name price { amount currency } remaining onSale } }
    edges { cursor }
    pageInfo { hasNextPage endCursor }
    totalCount
    __typename
  }
}`;

describe('a repeated document answers as the first time', () => {
  it.each([
    ['the public listing, anonymous', LISTING, { variables: { after: '2000-01-01T00:00:00Z', first: 5 } }],
    [
      'the listing for a member, with a role and the online URL',
      LISTING.replace('spotsLeft', 'spotsLeft onlineUrl'),
      { variables: { after: '2000-01-01T00:00:00Z' }, owner: true },
    ],
    ['the viewer', '{ viewer { id name username } }', { owner: true }],
    [
      'a node by global id, through the Node interface',
      'query($id: ID!) { node(id: $id) { __typename id ... on Event { title } } }',
      { variables: {}, withEvent: true, owner: true },
    ],
    ['introspection', '{ __schema { queryType { name } } __type(name: "Event") { fields { name } } }', {}],
    ['a resolver refusing its arguments', '{ event(id: "x", slug: "y") { id } }', {}],
    [
      'a domain error in a nested field, with partial data',
      'query($id: ID!) { event(id: $id) { title registrations(first: 1) { nodes { id } } } }',
      { variables: {}, withEvent: true, stranger: true },
    ],
    ['a variable of the wrong type', 'query($first: Int) { events(first: $first) { nodes { id } } }', { variables: { first: 'many' } }],
    [
      'a missing non-null variable',
      'query($after: DateTime!) { events(filter: { startsAfter: $after }) { nodes { id } } }',
      { variables: {} },
    ],
    ['a bad cursor', 'query($after: String) { events(first: 1, after: $after) { nodes { id } } }', { variables: { after: 'nope' } }],
    ['an anonymous query of a private field (the policy)', '{ viewer { id } }', {}],
    [
      'a mutation with invalid input',
      'mutation { updateViewerProfile(input: { name: "" }) { user { name } userErrors { field message code } } }',
      { owner: true },
    ],
  ])(
    '%s',
    async (_label, query, options: { variables?: Record<string, unknown>; owner?: boolean; stranger?: boolean; withEvent?: boolean }) => {
      const variables = options.withEvent ? { ...options.variables, id: eventId } : options.variables;
      const privateToken = options.owner ? owner : options.stranger ? stranger : undefined;
      const [first, second, third] = await threeTimes(query, { variables, privateToken });
      expect(second).toEqual(first);
      expect(third).toEqual(first);
    },
  );

  it('an unexpected failure stays a generic INTERNAL_SERVER_ERROR with its path and location', async () => {
    const isolated = await startTestApp();
    try {
      const query = '{ user(username: "x") { id } }';
      await graphql(isolated.url, query); // compiled from the next run on
      await isolated.get(DataSource).query('ALTER TABLE users RENAME COLUMN username TO handle');
      const res = await graphql(isolated.url, query);
      expect(res.status).toBe(200);
      expect(res.body.errors).toEqual([
        {
          message: 'Internal server error',
          locations: [{ line: 1, column: 3 }],
          path: ['user'],
          extensions: { code: 'INTERNAL_SERVER_ERROR' },
        },
      ]);
      expect(isolated.logs.some((l) => l.msg === 'GraphQL operation failed')).toBe(true);
    } finally {
      await isolated.close();
    }
  });
});
