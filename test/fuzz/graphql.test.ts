import fc from 'fast-check';
import { GraphQLSchemaHost } from '@nestjs/graphql';
import { getIntrospectionQuery, parse } from 'graphql';
import { operationCost } from '../../src/graphql/operation-analysis.js';
import { startTestApp, TestApp } from '../support/test-app.js';
import { junk, toJson, urlEncoding, encodeComponent, deeplyNested } from './support/encoding.js';
import { ErrorLog, printTally, expectGraphqlAnswer } from './support/expectations.js';
import {
  aliasedIntrospection,
  garbledDocument,
  GeneratedOperation,
  schemaOperation,
  structuralDocument,
} from './support/graphql-documents.js';
import { Answer, sendRaw } from './support/raw-http.js';
import { fuzzParameters } from './support/settings.js';
import { hostileText, hugeText } from './support/text.js';
import { buildWorld, World } from './support/world.js';

// /graphql never answers bad input with a 5xx, and always in the GraphQL-over-HTTP shape
// (docs/graphql-over-http.md): errors[] with a documented extensions.code, or the contract's 401/403.

let t: TestApp;
let world: World;
let log: ErrorLog;
beforeAll(async () => {
  t = await startTestApp();
  world = await buildWorld(t);
  log = new ErrorLog(t);
});
afterAll(async () => {
  printTally();
  await t.close();
});

type Caller = 'anonymous' | 'api' | 'read_api';
const caller = fc.constantFrom<Caller>('anonymous', 'api', 'read_api');

function credentials(who: Caller): [string, string][] {
  if (who === 'api') return [['Private-Token', world.token]];
  if (who === 'read_api') return [['Private-Token', world.readToken]];
  return [];
}

const accept = fc.constantFrom(
  undefined,
  'application/json',
  'application/graphql-response+json',
  'application/graphql-response+json, application/json;q=0.9',
  '*/*',
  'text/html',
  'image/png',
  'application/json; charset=latin1',
);

async function post(who: Caller, body: string, headers: [string, string][] = []): Promise<{ request: string; answer: Answer }> {
  const request = `POST /graphql as ${who} ${JSON.stringify(headers)} ${body.slice(0, 1500)}`;
  log.mark();
  const answer = await sendRaw(t.url, {
    method: 'POST',
    target: '/graphql',
    headers: [['Content-Type', 'application/json'], ...credentials(who), ...headers],
    body,
  });
  expectGraphqlAnswer(request, answer);
  log.expectNone(request);
  return { request, answer };
}

function envelope(operation: GeneratedOperation): string {
  return toJson({ query: operation.query, variables: operation.variables, operationName: operation.operationName });
}

describe('GraphQL documents and variables generated from the schema', () => {
  it.each<Caller>(['anonymous', 'api', 'read_api'])('queries as %s', async (who) => {
    await fc.assert(
      fc.asyncProperty(schemaOperation(world.pools, fc.constant('Query')), async (operation) => {
        await post(who, envelope(operation));
      }),
      fuzzParameters(),
    );
  });

  it.each<Caller>(['anonymous', 'api'])('mutations as %s', async (who) => {
    await fc.assert(
      fc.asyncProperty(schemaOperation(world.pools, fc.constant('Mutation')), async (operation) => {
        await post(who, envelope(operation));
      }),
      fuzzParameters(who === 'api' ? 2 : 0.5),
    );
  });

  it('the same operations with any Accept header', async () => {
    await fc.assert(
      fc.asyncProperty(caller, schemaOperation(world.pools), accept, async (who, operation, type) => {
        await post(who, envelope(operation), type === undefined ? [] : [['Accept', type]]);
      }),
      fuzzParameters(0.5),
    );
  });
});

describe('documents that are not what the schema expects', () => {
  it('garbled documents', async () => {
    await fc.assert(
      fc.asyncProperty(caller, garbledDocument, async (who, query) => {
        await post(who, toJson({ query }));
      }),
      fuzzParameters(),
    );
  });

  it('nesting, aliases, fragments, directives and operation names', async () => {
    await fc.assert(
      fc.asyncProperty(caller, structuralDocument, async (who, operation) => {
        await post(who, envelope(operation));
      }),
      fuzzParameters(),
    );
  });
});

describe('aliased introspection', () => {
  // Refused by a limit (BAD_REQUEST: a body over 1 MB), or admitted within the bounds
  // docs/graphql-over-http.md states for what the cost limits admit: at most 40 bytes of
  // answer per cost point, and CPU time under 5 s (orders of magnitude: the admitted ones measure under
  // 0.4 s; the server runs in this process).
  // Introspection alone may cost what the standard introspection query costs, within the largest limit.
  const allowance = () => {
    const standard = getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
      oneOf: true,
    });
    const { anonymous, authenticated } = t.config.graphql.limits;
    const cost = operationCost(t.get(GraphQLSchemaHost).schema, parse(standard), undefined, undefined) ?? 0;
    return Math.min(cost, Math.max(anonymous.maxCost, authenticated.maxCost));
  };
  const maxCost = (who: Caller) =>
    Math.max(who === 'anonymous' ? t.config.graphql.limits.anonymous.maxCost : t.config.graphql.limits.authenticated.maxCost, allowance());

  it('is refused or answered within the bounds of the cost limits, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(caller, aliasedIntrospection, async (who, operation) => {
        const started = process.cpuUsage();
        const { request, answer } = await post(who, envelope(operation));
        const used = process.cpuUsage(started);
        const body = answer.json as { errors?: { extensions?: { code?: string } }[] } | undefined;
        const summary = { request: request.slice(0, 300), status: answer.status, code: body?.errors?.[0]?.extensions?.code };
        if (answer.status !== 200 || body?.errors) {
          expect(summary).toEqual({
            ...summary,
            code: expect.stringMatching(/^(QUERY_TOO_(LARGE|DEEP|COMPLEX)|GRAPHQL_VALIDATION_FAILED|BAD_REQUEST)$/),
          });
          return;
        }
        expect({ ...summary, bytes: answer.text.length <= 40 * maxCost(who) }).toEqual({ ...summary, bytes: true });
        expect({ ...summary, cpuMs: (used.user + used.system) / 1000 < 5000 }).toEqual({ ...summary, cpuMs: true });
      }),
      fuzzParameters(),
    );
  });
});

describe('request envelopes', () => {
  const field = fc.oneof(junk, deeplyNested as fc.Arbitrary<unknown>);
  const request = fc.oneof(
    // Any of the members of the wrong type, or missing.
    fc.record(
      { query: fc.oneof(fc.constant('{ __typename }'), field), variables: field, operationName: field, extensions: field },
      { requiredKeys: [] },
    ),
    // Batches, scalars, nesting as the whole body.
    junk,
    deeplyNested,
    // Automatic persisted queries with hostile hashes.
    fc.record({ extensions: fc.record({ persistedQuery: fc.record({ version: junk, sha256Hash: junk }) }) }),
  );

  it('bodies of any JSON shape', async () => {
    await fc.assert(
      fc.asyncProperty(caller, request, async (who, body) => {
        await post(who, toJson(body));
      }),
      fuzzParameters(),
    );
  });

  it('bodies that are not JSON, or not what their media type says', async () => {
    const contentType = fc.constantFrom(
      'application/json',
      'application/json; charset=utf-16',
      'application/json; charset=ebcdic',
      'application/graphql',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'text/plain',
      'text/plain; charset=utf-8',
      '',
      ';',
      'application/json;;;;;',
      'application/*',
      '*/*',
    );
    const body = fc.oneof(
      hostileText,
      fc.constantFrom('{"query": ', '{"query": "{ __typename }"}', 'query={__typename}', '\ufeff{"query":"{ __typename }"}'),
    );
    await fc.assert(
      fc.asyncProperty(caller, contentType, body, async (who, type, text) => {
        const headers: [string, string][] = type === '' ? [] : [['Content-Type', type]];
        const description = `POST /graphql as ${who} content-type ${type} ${text.slice(0, 500)}`;
        log.mark();
        const answer = await sendRaw(t.url, { method: 'POST', target: '/graphql', headers: [...credentials(who), ...headers], body: text });
        expectGraphqlAnswer(description, answer);
        log.expectNone(description);
      }),
      fuzzParameters(),
    );
  });

  it('bodies over and under the 1 MB limit', async () => {
    await fc.assert(
      fc.asyncProperty(caller, hugeText, fc.constantFrom('query', 'variable', 'name'), async (who, text, where) => {
        const body =
          where === 'query'
            ? toJson({ query: `{ user(username: ${JSON.stringify(text)}) { id } }` })
            : where === 'variable'
              ? toJson({ query: 'query($u: String!) { user(username: $u) { id } }', variables: { u: text } })
              : toJson({ query: '{ __typename }', operationName: text });
        await post(who, body);
      }),
      fuzzParameters(0.05),
    );
  });

  it('GET with any query string', async () => {
    const param = fc.constantFrom('query', 'variables', 'operationName', 'extensions', 'queryId');
    const value = fc.oneof(
      schemaOperation(world.pools, fc.constant('Query')).map((op) => op.query),
      schemaOperation(world.pools, fc.constant('Mutation')).map((op) => op.query),
      junk.map(toJson),
      hostileText,
    );
    await fc.assert(
      fc.asyncProperty(caller, fc.array(fc.tuple(param, value), { maxLength: 4 }), urlEncoding, async (who, pairs, encoding) => {
        const search = pairs.map(([name, v]) => `${name}=${encodeComponent(v, encoding)}`).join('&');
        const target = `/graphql?${search}`;
        const description = `GET ${target.slice(0, 1500)} as ${who}`;
        log.mark();
        const answer = await sendRaw(t.url, { method: 'GET', target, headers: credentials(who) });
        expectGraphqlAnswer(description, answer);
        log.expectNone(description);
      }),
      fuzzParameters(),
    );
  });
});
