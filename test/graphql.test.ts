import { DataSource } from 'typeorm';
import { createUserWithToken } from './support/fixtures.js';
import { graphql } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';

describe('GraphQL endpoint', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp({
      GRAPHQL_MAX_DEPTH: '2',
      GRAPHQL_MAX_COST: '3',
      GRAPHQL_ANONYMOUS_MAX_DEPTH: '1',
      GRAPHQL_ANONYMOUS_MAX_COST: '2',
    });
    ({ token } = await createUserWithToken(t));
  });
  afterAll(() => t.close());

  it('rejects a query deeper than the limit before running it, with a clear message', async () => {
    // viewer { id } is depth 2; the anonymous limit is 1.
    const res = await graphql(t.url, '{ user(username: "x") { id } }');
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors?.[0]).toMatchObject({
      message: 'Query is nested 2 levels deep; the limit is 1.',
      extensions: { code: 'QUERY_TOO_DEEP', depth: 2, maxDepth: 1 },
    });
  });

  it('gives authenticated callers the higher limits', async () => {
    const res = await graphql(t.url, '{ user(username: "x") { id } }', { privateToken: token });
    expect(res.status).toBe(200);
  });

  it('rejects a query costlier than the limit', async () => {
    const res = await graphql(t.url, '{ viewer { id name username } }', { privateToken: token });
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0].extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', cost: expect.any(Number), maxCost: 3 });
    expect(res.body.errors?.[0].message).toMatch(/^Query would cost \d+ points; the limit is 3\./);
  });

  it('does not count introspection against the depth limit, but prices it by what it answers', async () => {
    // __type 1, name 1: within the anonymous cost of 2, and no depth at all.
    const res = await graphql(t.url, '{ __type(name: "Query") { name } }');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ __type: { name: 'Query' } });
    // Introspection alone is priced apart: what the standard introspection query costs on this schema, but
    // never past the largest limit (here GRAPHQL_MAX_COST, 3).
    const all = await graphql(t.url, '{ __schema { types { name fields { name type { name ofType { name } } } } } }');
    expect(all.status).toBe(400);
    expect(all.body.errors?.[0].extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', limit: 'cost', maxCost: 3 });
  });

  it('takes variables and checks their limits per request', async () => {
    const query = 'query Find($username: String!) { user(username: $username) { id } }';
    const res = await graphql(t.url, query, { privateToken: token, variables: { username: 'nobody' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { user: null } });
  });

  describe.each([
    ['application/graphql-response+json', 400],
    ['application/json', 200],
  ])('with Accept: %s', (accept, status) => {
    const headers = { accept };

    it(`answers a syntax error with ${status} and GRAPHQL_PARSE_FAILED, also anonymously`, async () => {
      const res = await graphql(t.url, '{ viewer { id ', { headers });
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toContain(accept);
      expect(res.body.errors?.[0].extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    });

    it(`answers an unknown field with ${status} and GRAPHQL_VALIDATION_FAILED`, async () => {
      const res = await graphql(t.url, '{ viewer { password } }', { privateToken: token, headers });
      expect(res.status).toBe(status);
      expect(res.body.errors?.[0]).toMatchObject({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    });

    it(`answers a subscription (the schema has none) with ${status} and GRAPHQL_VALIDATION_FAILED, not an internal error`, async () => {
      const res = await graphql(t.url, 'subscription { events { totalCount } }', { privateToken: token, headers });
      expect(res.status).toBe(status);
      expect(res.body.data).toBeUndefined();
      expect(res.body.errors).toEqual([
        expect.objectContaining({
          message: 'The schema does not support subscription operations.',
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
        }),
      ]);
    });

    it(`answers missing variables with ${status} and BAD_USER_INPUT`, async () => {
      const res = await graphql(t.url, 'query Find($username: String!) { user(username: $username) { id } }', {
        privateToken: token,
        headers,
      });
      expect(res.status).toBe(status);
      expect(res.body.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    });
  });

  it('answers a body that is no GraphQL request at all with 400 whatever the media type', async () => {
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ notAQuery: true }),
    });
    expect(res.status).toBe(400);
  });

  it('does not run automatic persisted queries (they would bypass the policy)', async () => {
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } }),
    });
    const body = (await res.json()) as { data?: unknown; errors: { extensions: { code: string } }[] };
    expect(body.data).toBeUndefined();
    expect(body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_SUPPORTED');
  });

  it('refuses batched requests', async () => {
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]),
    });
    expect(res.status).toBe(400);
  });
});

describe('GraphQL mutations', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('report invalid input in userErrors with the field path and a stable code', async () => {
    const { token } = await createUserWithToken(t);
    const res = await graphql(
      t.url,
      'mutation { updateViewerProfile(input: { name: "   " }) { user { name } userErrors { field message code } } }',
      {
        privateToken: token,
      },
    );
    expect(res.status).toBe(200);
    expect(res.body.data?.updateViewerProfile).toEqual({
      user: null,
      userErrors: [{ field: ['input', 'name'], message: 'Name must be 1 to 255 characters', code: 'INVALID_NAME' }],
    });
  });

  it('show the new profile to the next request of the same token', async () => {
    const { token } = await createUserWithToken(t);
    await graphql(t.url, 'mutation { updateViewerProfile(input: { name: "New Name" }) { user { name } } }', { privateToken: token });
    const res = await graphql(t.url, '{ viewer { name } }', { privateToken: token });
    expect(res.body.data?.viewer.name).toBe('New Name');
  });
});

describe('unexpected failures', () => {
  it('are answered with a generic INTERNAL_SERVER_ERROR and logged with the request id, never leaking SQL', async () => {
    const t = await startTestApp();
    try {
      await t.get(DataSource).query('ALTER TABLE users RENAME COLUMN username TO handle');
      const res = await graphql(t.url, '{ user(username: "x") { id } }', { headers: { 'x-request-id': 'failing-request-1' } });
      expect(res.status).toBe(200);
      expect(res.body.errors).toEqual([
        {
          message: 'Internal server error',
          locations: [{ line: 1, column: 3 }],
          path: ['user'],
          extensions: { code: 'INTERNAL_SERVER_ERROR' },
        },
      ]);
      expect(res.text).not.toMatch(/handle|does not exist|SELECT|lower\(/i);
      const logged = t.logs.find((l) => l.reqId === 'failing-request-1' && l.msg === 'GraphQL operation failed');
      expect(logged).toBeDefined();
      expect(JSON.stringify(logged)).toMatch(/column/);
    } finally {
      await t.close();
    }
  });
});
