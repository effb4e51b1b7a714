import fc from 'fast-check';
import { startTestApp, TestApp } from '../support/test-app.js';
import { encodeComponent, encodePairs, junk, toJson, urlEncoding } from './support/encoding.js';
import { ErrorLog, expectNoServerError, expectRestAnswer, printTally } from './support/expectations.js';
import { OpenApiDocument, Operation, operationsOf, schemaValue } from './support/openapi-requests.js';
import { sendRaw } from './support/raw-http.js';
import { fuzzParameters } from './support/settings.js';
import { hostileText, hugeText, storableText } from './support/text.js';
import { buildWorld, World } from './support/world.js';

// The legacy REST API (/api/) never answers bad input with a 5xx: errors are JSON
// `{"message": …}` with `errors` by field, a domain `code` or a parser's `error`, or the contract's
// 401/403 (src/errors/http-exception.filter.ts, src/legacy-api/legacy-exception.filter.ts).

let t: TestApp;
let world: World;
let log: ErrorLog;
let document: OpenApiDocument;
let operations: Operation[];
beforeAll(async () => {
  t = await startTestApp();
  world = await buildWorld(t);
  log = new ErrorLog(t);
  document = (await (await fetch(`${t.url}/api/openapi.json`)).json()) as OpenApiDocument;
  operations = operationsOf(document);
});
afterAll(async () => {
  printTally();
  await t.close();
});

type Caller = 'anonymous' | 'api' | 'read_api' | 'attendee';
const caller = fc.constantFrom<Caller>('anonymous', 'api', 'api', 'read_api', 'attendee');

function credentials(who: Caller): [string, string][] {
  if (who === 'api') return [['Private-Token', world.token]];
  if (who === 'read_api') return [['Private-Token', world.readToken]];
  if (who === 'attendee') return [['Private-Token', world.attendeeToken]];
  return [];
}

/** A path parameter: a real id or slug (uuids upper-cased too), or hostile text. */
const pathValue = () =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...world.uuids, ...world.pools.slugs) },
    { weight: 1, arbitrary: fc.constantFrom(...world.uuids).map((u) => u.toUpperCase()) },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 3, arbitrary: storableText },
    { weight: 1, arbitrary: hostileText },
  );

interface RestRequest {
  method: string;
  target: string;
  body?: string;
  contentType?: string;
}

/** A request for one operation: its path filled in, a query string, a body of its schema (or not). */
function requestFor(operation: Operation): fc.Arbitrary<RestRequest> {
  const params = fc.tuple(...operation.pathParams.map(() => pathValue()));
  const query = fc.array(
    fc
      .oneof(
        { weight: 4, arbitrary: operation.queryParams.length ? fc.constantFrom(...operation.queryParams) : fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      )
      .chain((param) =>
        param
          ? schemaValue(param.schema, param.name, document, { uuids: world.uuids, slugs: world.pools.slugs }).map((v): [string, string] => [
              param.name,
              typeof v === 'string' ? v : toJson(v),
            ])
          : fc.tuple(hostileText, hostileText),
      ),
    { maxLength: 4 },
  );
  const body = operation.body
    ? fc.oneof(
        {
          weight: 8,
          arbitrary: schemaValue(operation.body, 'body', document, { uuids: world.uuids, slugs: world.pools.slugs }).map(toJson),
        },
        { weight: 1, arbitrary: junk.map(toJson) },
        { weight: 1, arbitrary: hostileText },
      )
    : fc.option(junk.map(toJson), { freq: 4 });
  const method = fc.oneof(
    { weight: 12, arbitrary: fc.constant(operation.method) },
    fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'FOO'),
  );
  return fc.tuple(params, query, body, urlEncoding, method).map(([values, pairs, text, encoding, verb]) => {
    let path = operation.path;
    operation.pathParams.forEach((name, i) => (path = path.replace(`{${name}}`, encodeComponent(values[i]!, encoding))));
    const search = pairs.length ? `?${encodePairs(pairs, encoding)}` : '';
    return {
      method: verb,
      target: `${path}${search}`,
      body: text ?? undefined,
      contentType: text == null ? undefined : 'application/json',
    };
  });
}

async function check(who: Caller, request: RestRequest, extraHeaders: [string, string][] = []): Promise<void> {
  const headers: [string, string][] = [...credentials(who), ...extraHeaders];
  if (request.contentType) headers.push(['Content-Type', request.contentType]);
  const description = `${request.method} ${request.target} as ${who} ${request.body?.slice(0, 1000) ?? ''}`;
  log.mark();
  const answer = await sendRaw(t.url, { method: request.method, target: request.target, headers, body: request.body });
  if (request.method === 'HEAD') expectNoServerError('REST', description, answer);
  else expectRestAnswer(description, answer);
  log.expectNone(description);
}

describe('every operation of the OpenAPI document', () => {
  it('has operations to fuzz', () => {
    expect(operations.length).toBeGreaterThan(20);
  });

  it('answers any parameters and body of its schema, for any caller', async () => {
    const request = fc.nat().chain((n) => requestFor(operations[n % operations.length]!));
    await fc.assert(
      fc.asyncProperty(caller, request, async (who, req) => check(who, req)),
      fuzzParameters(6),
    );
  });

  it('answers bodies of another media type, or not what they say', async () => {
    const contentType = fc.constantFrom(
      'application/json',
      'application/json; charset=utf-16',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      'application/xml',
      '',
    );
    const writes = () => operations.filter((o) => o.method !== 'GET');
    await fc.assert(
      fc.asyncProperty(
        caller,
        fc.nat(),
        contentType,
        fc.oneof(hostileText, junk.map(toJson), fc.constantFrom('{"name": ', '{}', '[]', 'null', '"x"', '1e400', 'name=x&slug=y')),
        async (who, n, type, body) => {
          const operation = writes()[n % writes().length]!;
          const path = operation.path.replace(/\{[^}]+\}/g, world.uuids[n % world.uuids.length]!);
          await check(who, { method: operation.method, target: path, body, contentType: type || undefined });
        },
      ),
      fuzzParameters(),
    );
  });

  it('answers bodies over and under the 1 MB limit', async () => {
    await fc.assert(
      fc.asyncProperty(hugeText, fc.constantFrom('/api/organizers', '/api/events'), async (text, path) => {
        await check('api', {
          method: 'POST',
          target: path,
          body: toJson({ slug: 'big', name: text, title: text }),
          contentType: 'application/json',
        });
      }),
      fuzzParameters(0.05),
    );
  });

  it('answers paths that are not routes under /api/', async () => {
    const segment = fc.oneof(
      fc.constantFrom('api', 'events', 'organizers', 'registrations', '..', '.', '', '%2e%2e', '%2F', 'openapi.json'),
      hostileText.map((s) => encodeComponent(s, 'raw')),
    );
    await fc.assert(
      fc.asyncProperty(
        caller,
        fc.array(segment, { minLength: 1, maxLength: 5 }),
        fc.constantFrom('GET', 'POST', 'DELETE'),
        async (who, segments, method) => {
          await check(who, { method, target: `/api/${segments.join('/')}` });
        },
      ),
      fuzzParameters(),
    );
  });
});
