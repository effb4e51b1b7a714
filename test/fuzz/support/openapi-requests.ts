import fc from 'fast-check';
import { hostileNumberToken, junk } from './encoding.js';
import { hostileText, storableText } from './text.js';

/**
 * Legacy REST requests generated from the service's own OpenAPI document (/api/openapi.json): every
 * operation, its path and query parameters and its JSON body schema, filled with hostile values of
 * the right type most of the time. A route added to the API is fuzzed the day it is added.
 */

export interface JsonSchema {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  nullable?: boolean;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
}

export interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { in: string; name: string; schema?: JsonSchema }[];
        requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
      }
    >
  >;
  components?: { schemas?: Record<string, JsonSchema> };
}

export interface Operation {
  method: string;
  /** `/api/events/{id}` */
  path: string;
  pathParams: string[];
  queryParams: { name: string; schema: JsonSchema }[];
  body?: JsonSchema;
}

export function operationsOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const parameters = operation.parameters ?? [];
      operations.push({
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: parameters.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        body: operation.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return operations;
}

/** Real identifiers: uuids and slugs of the fixtures, so that requests reach the services. */
export interface RestPools {
  uuids: string[];
  slugs: string[];
}

function resolve(schema: JsonSchema, document: OpenApiDocument): JsonSchema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.split('/').pop()!;
  return document.components?.schemas?.[name] ?? {};
}

const dateText = fc.oneof(
  fc.date({ min: new Date(-62_135_596_800_000), max: new Date(253_402_300_799_999), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom(
    '2031-02-29T00:00:00Z',
    '2031-03-01T00:00:00+23:59',
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59.999999999Z',
    '2031-03-01T00:00:00.1234567890123Z',
  ),
);

const integer = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, -1, 1, 1_000_000, 1_000_001, 100_000_000, 2 ** 31, -(2 ** 31) - 1, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  hostileNumberToken as fc.Arbitrary<unknown>,
);

/** A value for a schema: mostly of its type with hostile contents, sometimes null or junk of any type. */
export function schemaValue(
  schema: JsonSchema,
  name: string,
  document: OpenApiDocument,
  pools: RestPools,
  depth = 0,
): fc.Arbitrary<unknown> {
  const s = resolve(schema, document);
  let right: fc.Arbitrary<unknown>;
  if (s.enum) right = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...s.enum) }, { weight: 1, arbitrary: hostileText });
  else if (s.type === 'object' || s.properties) right = objectValue(s, document, pools, depth);
  else if (s.type === 'array')
    right = fc.array(schemaValue(s.items ?? {}, name, document, pools, depth + 1), { maxLength: depth > 2 ? 1 : 4 });
  else if (s.type === 'integer' || s.type === 'number') right = integer;
  else if (s.type === 'boolean') right = fc.boolean();
  else if (s.format === 'uuid') right = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...pools.uuids) }, fc.uuid(), storableText);
  else if (s.format === 'date-time') right = fc.oneof({ weight: 3, arbitrary: dateText }, storableText);
  else
    right = fc.oneof(
      { weight: 3, arbitrary: plausibleText(name, pools) },
      { weight: 3, arbitrary: storableText },
      { weight: 1, arbitrary: hostileText },
    );
  return fc.oneof(
    { weight: 30, arbitrary: right },
    { weight: 2, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: junk as fc.Arbitrary<unknown> },
  );
}

function objectValue(
  schema: JsonSchema,
  document: OpenApiDocument,
  pools: RestPools,
  depth: number,
): fc.Arbitrary<Record<string, unknown>> {
  if (depth > 4) return fc.constant({});
  const required = new Set(schema.required ?? []);
  const entries = Object.entries(schema.properties ?? {}).map(([key, property]) =>
    fc.oneof(
      { weight: required.has(key) ? 1 : 3, arbitrary: fc.constant(null) },
      {
        weight: required.has(key) ? 30 : 7,
        arbitrary: schemaValue(property, key, document, pools, depth + 1).map((v) => [key, v] as const),
      },
    ),
  );
  const extra = fc.oneof(
    { weight: 20, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.tuple(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'id', 'status'), hostileText), junk) },
  );
  return fc.tuple(fc.tuple(...entries), extra).map(([chosen, more]) => {
    const object: Record<string, unknown> = {};
    for (const entry of chosen) if (entry) object[entry[0]] = entry[1];
    if (more) Object.defineProperty(object, more[0], { value: more[1], enumerable: true, configurable: true, writable: true });
    return object;
  });
}

function plausibleText(name: string, pools: RestPools): fc.Arbitrary<string> {
  if (name.includes('slug') || name === 'organizer')
    return fc.oneof(fc.constantFrom(...pools.slugs), fc.stringMatching(/^[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}$/));
  if (name.includes('time_zone')) return fc.constantFrom('Europe/Paris', 'UTC', 'Etc/GMT-14', 'Europe/Kyiv');
  if (name.includes('currency')) return fc.constantFrom('EUR', 'USD', 'JPY', 'eur', 'XXX');
  if (name.includes('country')) return fc.constantFrom('FR', 'us', 'ZZ');
  if (name.includes('url')) return fc.constantFrom('https://example.com/x', 'http://example.com', '');
  if (name.includes('email')) return fc.constantFrom('a@example.com', 'x@y');
  if (name === 'page' || name === 'per_page')
    return fc.oneof(fc.integer({ min: -5, max: 200 }).map(String), fc.constantFrom('1e3', '0x10', '1.5', '', '99999999999999999999'));
  return fc.constantFrom('Meetup', 'a', ' ', 'x'.repeat(201));
}
