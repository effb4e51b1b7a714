import { GraphQLSchemaHost } from '@nestjs/graphql';
import { getIntrospectionQuery, parse } from 'graphql';
import { DataSource } from 'typeorm';
import { operationCost } from '../src/graphql/operation-analysis.js';
import { createOrganizer, insertEvents } from './support/events.js';
import { createUserWithToken } from './support/fixtures.js';
import { graphql, GraphqlBody } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';

/**
 * The cost model has no free lunch: introspection costs what its answer holds, every alias and
 * `__typename` is paid, and the costliest document each limit admits answers within a stated size
 * and time (docs/graphql-over-http.md, "Cost"; figures in docs/benchmarks.md).
 */
const ANONYMOUS_MAX_COST = 5000;
const MAX_COST = 20_000;
/**
 * CPU time, orders of magnitude only (the size bound is the exact one): measured 0.03–1.2 s on a busy
 * two-core machine, on the embedded database and on PostgreSQL; a document that costs ten times what it
 * is charged fails it.
 */
const MAX_MILLISECONDS = 5000;
/** What the costliest admitted document may answer: at most 40 bytes per cost point (the data here has short texts). */
const maxBytes = (cost: number): number => cost * 40;

const repeat = (n: number, item: (i: number) => string): string => Array.from({ length: n }, (_, i) => item(i)).join(' ');
const graphqlResponse = { accept: 'application/graphql-response+json' };

/** Introspection of every type with its fields and their types, three wrappers deep. */
const TYPES_AND_FIELDS = 'types { name kind fields { name type { kind name ofType { kind name ofType { kind name } } } } }';

/** graphql-js's standard introspection query with every option, as the operation policy prices it. */
const STANDARD_INTROSPECTION = getIntrospectionQuery({
  descriptions: true,
  specifiedByUrl: true,
  directiveIsRepeatable: true,
  schemaDescription: true,
  inputValueDeprecation: true,
  oneOf: true,
});

describe('GraphQL cost model', () => {
  let t: TestApp;
  let token: string;
  let costOf: (query: string) => number;
  /** What introspection alone may cost, whoever asks: the standard introspection query's cost on this schema. */
  let introspectionAllowance: number;

  beforeAll(async () => {
    t = await startTestApp();
    ({ token } = await createUserWithToken(t));
    const schema = t.get(GraphQLSchemaHost).schema;
    costOf = (query) => operationCost(schema, parse(query), undefined, undefined)!;
    introspectionAllowance = costOf(STANDARD_INTROSPECTION);
    // The process's first request warms up what every later one shares: the timings below are each document's.
    await graphql(t.url, '{ events(first: 1) { nodes { id } } }');
    // 100 public events of one organizer: the data documents below fill their pages.
    const organizer = await createOrganizer(t, token);
    const startsAt = new Date(Date.now() + 30 * 24 * 3600 * 1000);
    await insertEvents(
      t,
      organizer.id,
      Array.from({ length: 100 }, (_, i) => ({ title: `Costly event ${i}`, startsAt })),
    );
  });
  afterAll(() => t.close());

  /** The largest `n` (1 to `high`) for which `document(n)` costs at most `limit`: its cost rises with n. */
  function largestWithin(limit: number, high: number, document: (n: number) => string): number {
    let low = 0;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (costOf(document(middle)) <= limit) low = middle;
      else high = middle - 1;
    }
    expect(low).toBeGreaterThan(0);
    return low;
  }

  /**
   * The request and the CPU time it took: the server runs in this process, so CPU time measures its
   * work whatever else the shared machine runs at that moment (wall time there swings 3×).
   */
  async function timed(query: string, options: { privateToken?: string } = {}) {
    const started = process.cpuUsage();
    const res = await graphql(t.url, query, { ...options, headers: graphqlResponse });
    const used = process.cpuUsage(started);
    return { res, milliseconds: (used.user + used.system) / 1000 };
  }

  it('refuses 650 aliased __schema { types { … } } anonymously with QUERY_TOO_COMPLEX, without building them (it was charged 1 point)', async () => {
    const query = `{ ${repeat(650, (i) => `s${i}: __schema { types { name kind fields { name } } }`)} }`;
    const { res, milliseconds } = await timed(query);
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    // Introspection alone is priced apart: its limit is the standard introspection query's cost.
    expect(res.body.errors).toEqual([
      {
        message: `Query would cost at least 20001 points; the limit is ${introspectionAllowance}. Ask for fewer items per page, fewer fields or fewer aliases.`,
        extensions: { code: 'QUERY_TOO_COMPLEX', limit: 'cost', cost: 20_001, maxCost: introspectionAllowance },
      },
    ]);
    expect(milliseconds).toBeLessThan(MAX_MILLISECONDS);
  });

  it('charges every aliased field, __typename included: 5,100 through fragments are refused anonymously', async () => {
    const fragment = `fragment F on Query { ${repeat(100, (i) => `t${i}: __typename`)} }`;
    const res = await graphql(t.url, `{ ${repeat(51, () => '...F')} } ${fragment}`, { headers: graphqlResponse });
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0]?.extensions).toEqual({ code: 'QUERY_TOO_COMPLEX', limit: 'cost', cost: 5100, maxCost: ANONYMOUS_MAX_COST });
  });

  it('prices introspection by its answer: a list of the schema’s types costs one per type it holds', async () => {
    const res = await graphql(t.url, '{ __schema { types { name } } }');
    const types = (res.body.data?.__schema.types as unknown[]).length;
    // __schema 1, types 1, one name per type.
    expect(costOf('{ __schema { types { name } } }')).toBe(2 + types);
    expect(costOf('{ a: __schema { types { name } } b: __schema { types { name } } }')).toBe(2 * (2 + types));
  });

  it('costs each request of an introspecting document by its own variables: __type(name: $name)', async () => {
    const query = `query($name: String!) { ${repeat(100, (i) => `t${i}: __type(name: $name) { fields { name description type { name kind } } }`)} }`;
    const send = async (name: string) => {
      const res = await graphql(t.url, query, { variables: { name }, headers: graphqlResponse });
      return res.body.errors?.[0]?.extensions?.code ?? res.status;
    };
    for (let round = 0; round < 2; round++) {
      // A scalar has no fields: 100 × 2 points. Event's fields: over 5,000.
      expect(await send('String')).toBe(200);
      expect(await send('Event')).toBe('QUERY_TOO_COMPLEX');
    }
  });

  it('admits the standard introspection query (graphql-js getIntrospectionQuery) anonymously, however large the schema: introspection alone is priced apart', async () => {
    const query = STANDARD_INTROSPECTION;
    const { res, milliseconds } = await timed(query);
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(costOf(query)).toBe(introspectionAllowance);
    expect(introspectionAllowance).toBeLessThanOrEqual(MAX_COST);
    // With a data field beside it, the operation is priced as any other: over the anonymous limit.
    const mixed = query.replace(/query IntrospectionQuery \{/, 'query IntrospectionQuery { events(first: 1) { nodes { id } }');
    expect(costOf(mixed)).toBeGreaterThan(ANONYMOUS_MAX_COST);
    const refused = await graphql(t.url, mixed);
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', maxCost: ANONYMOUS_MAX_COST });
    expect(res.text.length).toBeLessThan(maxBytes(costOf(query)));
    expect(milliseconds).toBeLessThan(MAX_MILLISECONDS);
  });

  describe('the costliest document each limit admits answers within the stated size and time', () => {
    // [what, the cost limit, authenticated, largest n to try, the document for n]
    const documents: [string, number, boolean, number, (n: number) => string][] = [
      [
        'anonymous cost: aliased introspection of every type and field',
        ANONYMOUS_MAX_COST,
        false,
        100,
        (n) => `{ __schema { ${repeat(n, (i) => `t${i}: ${TYPES_AND_FIELDS}`)} } }`,
      ],
      ['cost: aliased __schema roots', MAX_COST, true, 100, (n) => `{ ${repeat(n, (i) => `s${i}: __schema { ${TYPES_AND_FIELDS} }`)} }`],
      [
        'anonymous cost: 100 events, each with its organizer’s events (depth 6)',
        ANONYMOUS_MAX_COST,
        false,
        100,
        (n) => `{ events(first: 100) { nodes { id title slug organizer { name events(first: ${n}) { nodes { id title startsAt } } } } } }`,
      ],
      [
        'cost: 100 events, each with its organizer’s events (depth 7)',
        MAX_COST,
        true,
        100,
        (n) =>
          `{ events(first: 100) { nodes { id title slug description organizer { name events(first: ${n}) { nodes { id title startsAt venue { city } } } } } } }`,
      ],
      ['tokens: aliased __typename, 3 tokens each', ANONYMOUS_MAX_COST, false, 4999, (n) => `{ ${repeat(n, (i) => `t${i}: __typename`)} }`],
      [
        'selections: 100 spreads of a fragment of aliased __typename',
        MAX_COST,
        true,
        99,
        (n) => `{ ${repeat(100, () => '...F')} } fragment F on Query { ${repeat(n, (i) => `t${i}: __typename`)} }`,
      ],
    ];

    it.each(documents)('%s', async (_name, limit, authenticated, high, document) => {
      const n = largestWithin(limit, high, document);
      const query = document(n);
      const cost = costOf(query);
      const { res, milliseconds } = await timed(query, authenticated ? { privateToken: token } : {});
      expect({ status: res.status, errors: (res.body as GraphqlBody).errors }).toEqual({ status: 200, errors: undefined });
      expect(res.text.length).toBeLessThan(maxBytes(cost));
      expect(milliseconds).toBeLessThan(MAX_MILLISECONDS);
      // One step further is refused (when the step exists).
      if (n < high) {
        const over = await graphql(t.url, document(n + 1), { privateToken: authenticated ? token : undefined, headers: graphqlResponse });
        expect(over.body.errors?.[0]?.extensions).toMatchObject({ code: expect.stringMatching(/^QUERY_TOO_/) });
      }
      process.stdout.write(`${_name}: n=${n} cost=${cost} bytes=${res.text.length} cpu ms=${milliseconds.toFixed(0)}\n`);
    });
  });

  describe('long texts', () => {
    beforeAll(async () => {
      // The longest descriptions events may have (a check constraint holds them to 20,000 characters).
      await t.get(DataSource).query(`UPDATE events SET description = repeat('d', 20000) WHERE title LIKE 'Costly event %'`);
    });

    it('prices a description by its length: 48 aliased descriptions of 100 events are refused anonymously (they cost 4,901 and would answer 96 MB)', async () => {
      const query = `{ events(first: 100) { nodes { ${repeat(48, (i) => `d${i}: description`)} } } }`;
      const res = await graphql(t.url, query, { headers: graphqlResponse });
      expect(res.status).toBe(400);
      // 1 + 100 × (nodes 1 + 48 × 20)
      expect(res.body.errors?.[0]?.extensions).toEqual({
        code: 'QUERY_TOO_COMPLEX',
        limit: 'cost',
        cost: 96_101,
        maxCost: ANONYMOUS_MAX_COST,
      });
    });

    it.each([
      ['anonymous', ANONYMOUS_MAX_COST, false],
      ['authenticated', MAX_COST, true],
    ])(
      'the costliest document of descriptions (%s) answers at most 1,000 characters per cost point',
      async (_who, limit, authenticated) => {
        const document = (n: number) =>
          `{ events(first: 100) { nodes { ${repeat(n, (i) => `d${i}: description`)} organizer { ${repeat(n, (i) => `o${i}: description`)} } } } }`;
        const n = largestWithin(limit, 100, document);
        const cost = costOf(document(n));
        const { res, milliseconds } = await timed(document(n), authenticated ? { privateToken: token } : {});
        expect({ status: res.status, errors: res.body.errors }).toEqual({ status: 200, errors: undefined });
        expect(res.text.length).toBeLessThan(cost * 1000);
        expect(milliseconds).toBeLessThan(MAX_MILLISECONDS);
        process.stdout.write(`descriptions (${_who}): n=${n} cost=${cost} bytes=${res.text.length} cpu ms=${milliseconds.toFixed(0)}\n`);
      },
    );
  });

  describe('Cache-Control', () => {
    const query = '{ viewer { id name } }';

    it.each([
      ['POST with Private-Token', () => graphql(t.url, query, { privateToken: token })],
      ['POST with Bearer', () => graphql(t.url, query, { bearer: token })],
      [
        'GET with Private-Token',
        () => fetch(`${t.url}/graphql?query=${encodeURIComponent(query)}`, { headers: { 'private-token': token } }),
      ],
      [
        'GET with Bearer',
        () => fetch(`${t.url}/graphql?query=${encodeURIComponent(query)}`, { headers: { authorization: `Bearer ${token}` } }),
      ],
    ])('answers a request with credentials (%s) with Cache-Control: private, no-store', async (_how, send) => {
      const res = await send();
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('private, no-store');
    });

    it('answers a refusal by a limit to a request with credentials with Cache-Control: private, no-store too', async () => {
      const res = await graphql(t.url, `{ ${repeat(3000, () => '__typename')} }`, { privateToken: token });
      expect(res.status).toBe(400);
      expect(res.headers.get('cache-control')).toBe('private, no-store');
    });

    it('gives anonymous answers, public data only, no caching directive', async () => {
      const res = await fetch(`${t.url}/graphql?query=${encodeURIComponent('{ events(first: 1) { nodes { id } } }')}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBeNull();
    });
  });
});
