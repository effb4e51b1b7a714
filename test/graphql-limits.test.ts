import { createUserWithToken } from './support/fixtures.js';
import { ApiResponse, graphql, GraphqlBody } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';

/**
 * Every limit a GraphQL request can run into answers 400 with its own stable code, whatever the
 * media type asked for (a refusal of the request, like the depth and cost limits), names its number,
 * and is logged at info: a client's mistake, not the service's fault.
 */
const MEDIA_TYPES = ['application/graphql-response+json', 'application/json'];

const repeat = (n: number, item: (i: number) => string): string => Array.from({ length: n }, (_, i) => item(i)).join(' ');

/** `{ ...F0 }` where each fragment spreads the next twice: 2^levels selections from a few hundred bytes. */
function fragmentBomb(levels: number): string {
  let document = '{ ...F0 }';
  for (let i = 0; i < levels; i++) document += ` fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`;
  return `${document} fragment F${levels} on Query { __typename }`;
}

describe('GraphQL limits', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp();
    ({ token } = await createUserWithToken(t));
  });
  afterAll(() => t.close());

  async function refused(query: string, accept: string, options: { privateToken?: string } = {}): Promise<ApiResponse<GraphqlBody>> {
    const requestId = `limit-${Math.random().toString(36).slice(2)}`;
    const res = await graphql(t.url, query, { ...options, headers: { accept, 'x-request-id': requestId } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain(accept);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors).toHaveLength(1);
    const lines = t.logs.filter((l) => l.reqId === requestId);
    expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
    expect(lines.find((l) => l.msg === 'GraphQL request refused by a limit')).toMatchObject({
      level: 30,
      code: res.body.errors![0]!.extensions!.code,
      limit: res.body.errors![0]!.extensions!.limit,
    });
    return res;
  }

  describe.each(MEDIA_TYPES)('with Accept: %s', (accept) => {
    it('refuses a document of more than 15,000 tokens (10,001 aliased fields) with QUERY_TOO_LARGE, anonymously', async () => {
      const res = await refused(`{ ${repeat(10_001, (i) => `a${i}: __typename`)} }`, accept);
      expect(res.body.errors![0]).toEqual({
        message: 'Query has more than 15000 tokens (names, values and punctuation); the limit is 15000.',
        extensions: { code: 'QUERY_TOO_LARGE', limit: 'tokens', maxTokens: 15_000 },
      });
    });

    it('refuses more than 10,000 selections, fragments counted each time they are spread, with QUERY_TOO_LARGE', async () => {
      const res = await refused(fragmentBomb(14), accept);
      expect(res.body.errors![0]).toEqual({
        message: 'Query selects more than 10000 fields (a fragment counts each time it is spread); the limit is 10000.',
        extensions: { code: 'QUERY_TOO_LARGE', limit: 'selections', maxSelections: 10_000 },
      });
    });

    it('refuses a field repeated 3,000 times, which graphql-js gives up validating, with QUERY_TOO_COMPLEX', async () => {
      const res = await refused(`{ ${repeat(3000, () => '__typename')} }`, accept);
      expect(res.body.errors![0]!.extensions).toEqual({ code: 'QUERY_TOO_COMPLEX', limit: 'validation' });
      expect(res.body.errors![0]!.message).toMatch(/^Query is too complex to validate: /);
    });

    it('refuses brackets nested more than 200 deep before parsing, with QUERY_TOO_DEEP', async () => {
      const res = await refused(`{ event(slug: ${'['.repeat(3000)}"x"${']'.repeat(3000)}) { id } }`, accept);
      expect(res.body.errors![0]).toEqual({
        message: 'Query nests more than 200 levels deep (brackets, or fragments spread inside fragments); the limit is 200.',
        extensions: { code: 'QUERY_TOO_DEEP', limit: 'nesting', maxNesting: 200 },
      });
    });

    it('refuses a chain of 1,800 fragments each spreading the next, which used to overflow the stack (500)', async () => {
      let query = '{ ...F0 }';
      for (let i = 0; i < 1800; i++) query += ` fragment F${i} on Query { ...F${i + 1} }`;
      const res = await refused(`${query} fragment F1800 on Query { __typename }`, accept);
      expect(res.body.errors![0]!.extensions).toEqual({ code: 'QUERY_TOO_DEEP', limit: 'nesting', maxNesting: 200 });
    });

    it('refuses deeply nested fields without overflowing the stack (it used to answer 500)', async () => {
      const levels = 900;
      const query = `{ ${'events { nodes { organizer { '.repeat(levels)} id ${'} } } '.repeat(levels)} }`;
      const res = await refused(query, accept, { privateToken: token });
      expect(res.body.errors![0]!.extensions).toMatchObject({ code: 'QUERY_TOO_DEEP', limit: 'nesting' });
    });

    it('refuses introspection nesting fields, interfaces, possibleTypes or inputFields three deep with QUERY_TOO_DEEP', async () => {
      const res = await refused('{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }', accept);
      expect(res.body.errors![0]).toEqual({
        message: 'Introspection nests fields, interfaces, possibleTypes or inputFields 3 levels deep; the limit is 2.',
        locations: [{ line: 1, column: 3 }],
        extensions: { code: 'QUERY_TOO_DEEP', limit: 'introspectionDepth', maxIntrospectionDepth: 2 },
      });
    });

    it('refuses a query deeper than GRAPHQL_ANONYMOUS_MAX_DEPTH with QUERY_TOO_DEEP', async () => {
      const query = `{ events { nodes { ${'organizer { events { nodes { '.repeat(2)} id ${'} } } '.repeat(2)} } } }`;
      const res = await refused(query, accept);
      expect(res.body.errors![0]!.extensions).toEqual({ code: 'QUERY_TOO_DEEP', limit: 'depth', depth: 9, maxDepth: 8 });
    });

    it('refuses a query costlier than GRAPHQL_ANONYMOUS_MAX_COST with QUERY_TOO_COMPLEX', async () => {
      const res = await refused('{ events(first: 100) { nodes { id organizer { events(first: 100) { nodes { id } } } } } }', accept);
      expect(res.body.errors![0]!.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', limit: 'cost', maxCost: 5000 });
    });
  });

  it.each([
    ['nesting', `{ event(slug: ${'['.repeat(300)}"x"${']'.repeat(300)}) { id } }`, 'QUERY_TOO_DEEP'],
    ['validation', `{ ${repeat(800, () => '__typename')} }`, 'QUERY_TOO_COMPLEX'],
  ])('answers the %s limit the same way on GET', async (_limit, query, code) => {
    const res = await fetch(`${t.url}/graphql?query=${encodeURIComponent(query)}`, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as GraphqlBody).errors?.[0]?.extensions?.code).toBe(code);
  });

  it('lets a document at the limits through: brackets 200 deep, 10,000 selections', async () => {
    const headers = { accept: 'application/graphql-response+json' };
    // `{`, `(` and 198 `[`: 200 deep. The list is no slug, which validation then says.
    const nested = await graphql(t.url, `{ event(slug: ${'['.repeat(198)}"x"${']'.repeat(198)}) { id } }`, { headers });
    expect(nested.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const deeper = await graphql(t.url, `{ event(slug: ${'['.repeat(199)}"x"${']'.repeat(199)}) { id } }`, { headers });
    expect(deeper.body.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_DEEP', limit: 'nesting' });

    // 100 spreads of a fragment of 99 fields: 100 + 100 × 99 = 10,000 selections.
    const fragment = `fragment F on Query { ${repeat(99, (i) => `f${i}: __typename`)} }`;
    // Each spread's fields are paid (9,900 points): over the anonymous cost limit, within a token's.
    const wide = await graphql(t.url, `{ ${repeat(100, () => '...F')} } ${fragment}`, { headers, privateToken: token });
    expect(wide.status).toBe(200);
    expect(Object.keys(wide.body.data ?? {})).toHaveLength(99);
    const wider = await graphql(t.url, `{ __typename ${repeat(100, () => '...F')} } ${fragment}`, { headers, privateToken: token });
    expect(wider.body.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_LARGE', limit: 'selections' });
  });

  it('costs each request of a document by its own variables: page sizes and @include conditions', async () => {
    const query = `query($outer: Int!, $inner: Int!, $more: Boolean!, $after: String) {
      events(first: $outer, after: $after) { nodes { id organizer @include(if: $more) { events(first: $inner) { nodes { id } } } } } }`;
    const costOf = async (variables: Record<string, unknown>) => {
      const res = await graphql(t.url, query, { variables, headers: { accept: 'application/json' } });
      return res.body.errors?.[0]?.extensions?.code ?? res.status;
    };
    // Anonymous cost limit 5,000: 100 × (1 + 100 × 2) is over it, 10 × (1 + 100 × 2) is not.
    for (let round = 0; round < 2; round++) {
      expect(await costOf({ outer: 10, inner: 100, more: true })).toBe(200);
      expect(await costOf({ outer: 100, inner: 100, more: true })).toBe('QUERY_TOO_COMPLEX');
      expect(await costOf({ outer: 100, inner: 100, more: false })).toBe(200);
      expect(await costOf({ outer: 100, inner: 100, more: true, after: null })).toBe('QUERY_TOO_COMPLEX');
      expect(await costOf({ outer: 'many', inner: 100, more: true })).toBe('BAD_USER_INPUT');
    }
  });

  it('answers page sizes outside 0 to 100 with BAD_USER_INPUT INVALID_PAGE_SIZE on the field', async () => {
    const res = await graphql(t.url, '{ events(first: 101) { nodes { id } } }');
    expect(res.status).toBe(200);
    expect(res.body.errors?.[0]).toMatchObject({
      message: 'first must be between 0 and 100.',
      path: ['events'],
      extensions: { code: 'BAD_USER_INPUT', reason: 'INVALID_PAGE_SIZE', field: 'first' },
    });
  });
});
