import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import {
  buildSchema,
  getNamedType,
  GraphQLArgument,
  GraphQLEnumType,
  GraphQLField,
  GraphQLInputObjectType,
  GraphQLInputType,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLOutputType,
  GraphQLScalarType,
  GraphQLSchema,
  isLeafType,
} from 'graphql';
import { hostileNumberToken, junk, RawJson, toJson } from './encoding.js';
import { base64urlOfJunk, hostileText, storableText } from './text.js';

/**
 * GraphQL operations generated from schema.graphql itself: every root field with arguments of the
 * right type holding hostile values (or of the wrong type), a random selection, given inline as
 * literals or as variables. A field added to the schema is fuzzed the day it is added.
 */

export const schema: GraphQLSchema = buildSchema(readFileSync(new URL('../../../schema.graphql', import.meta.url), 'utf8'));

/** Real values from the test's fixtures, so that generated operations reach the services. */
export interface Pools {
  ids: string[];
  /** The same, by type: `eventId` gets an event's. */
  idsOf: Record<string, string[]>;
  slugs: string[];
  usernames: string[];
  cursors: string[];
}

/** Plausible values for fields whose name says what they hold, so that validation goes deeper. */
function plausible(name: string, pools: Pools): fc.Arbitrary<string> | undefined {
  const lower = name.toLowerCase();
  if (lower.endsWith('id') && pools.ids.length) {
    const typed = Object.entries(pools.idsOf).find(([type]) => lower === `${type.toLowerCase()}id`)?.[1];
    return fc.oneof(
      { weight: typed ? 4 : 0, arbitrary: fc.constantFrom(...(typed ?? pools.ids)) },
      { weight: 1, arbitrary: fc.constantFrom(...pools.ids) },
    );
  }
  if (lower.includes('slug')) return fc.oneof(fc.constantFrom(...pools.slugs), fc.stringMatching(/^[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}$/));
  if (lower.includes('username')) return fc.constantFrom(...pools.usernames);
  if (lower === 'after' || lower === 'before') return fc.oneof(fc.constantFrom(...pools.cursors), tamperedCursor);
  if (lower.includes('timezone'))
    return fc.constantFrom('Europe/Paris', 'UTC', 'America/Argentina/ComodRivadavia', 'Etc/GMT+14', 'EST5EDT');
  if (lower.includes('currency')) return fc.constantFrom('EUR', 'USD', 'JPY', 'BHD', 'XXX', 'eur');
  if (lower.includes('country')) return fc.constantFrom('FR', 'US', 'ZZ', 'fr', 'FRA');
  if (lower.includes('url'))
    return fc.constantFrom('https://example.com', 'https://meet.example.com/r', 'http://127.0.0.1:1/', 'https://[::1]/');
  if (lower.includes('email')) return fc.constantFrom('a@example.com', 'A@EXAMPLE.COM', 'x+y@sub.example.org');
  if (lower === 'search') return fc.constantFrom('meetup', 'a', '%', '_');
  return undefined;
}

/** A cursor's shape (base64url of a JSON array of the sort key as text) holding values of the wrong kind. */
const tamperedCursor: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '2031-02-31 00:00:00+00',
        '2031-03-01 24:00:00+00',
        '0000-01-01 00:00:00+00',
        '294277-01-01 00:00:00+00',
        '2031-03-01 00:00:00+99',
      ),
      fc.constantFrom('9223372036854775808', '-1', '0b6f7c3e-2f64-4a0b-9d1e-3f4a5b6c7d8e', 'ffffffff-ffff-ffff-ffff-fffffffffffg'),
      hostileText,
      junk as fc.Arbitrary<unknown>,
    ),
    { maxLength: 3 },
  )
  .map((values) => Buffer.from(toJson(values), 'utf8').toString('base64url'));

const DAY = 86_400_000;
const dateTimeText = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -30, max: 3650 }).map((days) => new Date(Date.now() + days * DAY).toISOString()) },
  fc.date({ min: new Date(-62_135_596_800_000), max: new Date(253_402_300_799_999), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom(
    '2031-02-31T00:00:00Z',
    '2031-03-01T24:00:00Z',
    '2031-03-01T23:59:60Z',
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59.999999999+14:00',
    '2031-03-01T00:00:00-23:59',
    '2031-03-01T00:00:00+99:99',
    '2031-03-01T00:00Z',
    '1969-12-31T23:59:59.999Z',
  ),
);

const int32 = fc.oneof(
  { weight: 4, arbitrary: fc.integer() },
  { weight: 4, arbitrary: fc.constantFrom(0, -1, 1, 2, 10, 20, 100, 101, 1_000_000, 1_000_001, 2147483647, -2147483648) },
  { weight: 1, arbitrary: hostileNumberToken as fc.Arbitrary<unknown> },
);

/** A value of the scalar, of the right type but hostile. */
function scalarValue(type: GraphQLScalarType | GraphQLEnumType, name: string, pools: Pools): fc.Arbitrary<unknown> {
  if (type instanceof GraphQLEnumType) {
    return fc.oneof(
      { weight: 12, arbitrary: fc.constantFrom(...type.getValues().map((v) => new EnumValue(v.name))) },
      { weight: 1, arbitrary: fc.constant(new EnumValue('NOPE')) },
    );
  }
  const known = plausible(name, pools);
  switch (type.name) {
    case 'Int':
      return int32;
    case 'Float':
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), hostileNumberToken);
    case 'Boolean':
      return fc.boolean();
    case 'ID':
      return fc.oneof(
        { weight: 6, arbitrary: plausible(name, pools) ?? base64urlOfJunk },
        { weight: 2, arbitrary: base64urlOfJunk },
        { weight: 1, arbitrary: hostileText },
        { weight: 1, arbitrary: fc.integer() },
      );
    case 'DateTime':
      return fc.oneof({ weight: 8, arbitrary: dateTimeText }, { weight: 1, arbitrary: hostileText });
    default:
      // Mostly text that can be stored: what cannot is refused at the edge, before the services.
      return fc.oneof(
        { weight: known ? 3 : 0, arbitrary: known ?? storableText },
        { weight: 3, arbitrary: storableText },
        { weight: 1, arbitrary: hostileText },
      );
  }
}

/** An enum value, written bare in a literal (a string there is a type error, which is also fuzzed). */
export class EnumValue {
  constructor(readonly name: string) {}
  toJSON(): string {
    return this.name;
  }
}

/**
 * A value for an input type: mostly of that type with hostile contents, sometimes null or any junk at
 * all. Wrong types are rare per value, as one of them fails the whole operation at validation, and
 * most operations should reach the resolvers.
 */
export function inputValue(type: GraphQLInputType, name: string, pools: Pools, depth = 0, nullable = true): fc.Arbitrary<unknown> {
  const wrong = junk as fc.Arbitrary<unknown>;
  if (type instanceof GraphQLNonNull)
    return fc.oneof(
      { weight: 40, arbitrary: inputValue(type.ofType, name, pools, depth, false) },
      { weight: 1, arbitrary: fc.constant(null) },
    );
  const right: fc.Arbitrary<unknown> =
    type instanceof GraphQLList
      ? fc.oneof(
          fc.array(inputValue(type.ofType as GraphQLInputType, name, pools, depth + 1), { maxLength: depth > 2 ? 1 : 4 }),
          inputValue(type.ofType as GraphQLInputType, name, pools, depth + 1),
        )
      : type instanceof GraphQLInputObjectType
        ? inputObject(type, pools, depth)
        : scalarValue(type as GraphQLScalarType, name, pools);
  return fc.oneof(
    { weight: 40, arbitrary: right },
    { weight: nullable ? 2 : 0, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: wrong },
  );
}

function inputObject(type: GraphQLInputObjectType, pools: Pools, depth: number): fc.Arbitrary<Record<string, unknown>> {
  if (depth > 4) return fc.constant({});
  const fields = Object.values(type.getFields());
  const entries = fields.map((field) =>
    fc.option(
      inputValue(field.type, field.name, pools, depth + 1).map((value) => [field.name, value] as const),
      { freq: field.type instanceof GraphQLNonNull ? 40 : 3 },
    ),
  );
  const extra = fc.oneof(
    { weight: 25, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.tuple(fc.oneof(fc.constantFrom('unknownField', '__proto__', 'id'), hostileText), junk) },
  );
  return fc.tuple(fc.tuple(...entries), extra).map(([chosen, more]) => {
    const object: Record<string, unknown> = {};
    for (const entry of chosen) if (entry) object[entry[0]] = entry[1];
    if (more) Object.defineProperty(object, more[0], { value: more[1], enumerable: true, configurable: true, writable: true });
    return object;
  });
}

const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** A JS value as a GraphQL literal; strings sometimes as block strings, sometimes unescaped. */
export function literal(value: unknown, style: number): string {
  if (value instanceof EnumValue) return value.name;
  if (value instanceof RawJson) return value.text;
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') {
    if (style % 11 === 3 && !value.includes('"""') && !value.endsWith('"') && !value.endsWith('\\')) return `"""${value}"""`;
    if (style % 29 === 5) return `"${value}"`; // unescaped: quotes, newlines and controls break the lexer
    return JSON.stringify(value);
  }
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map((v) => literal(v, style + 1)).join(', ')}]`;
  const fields = Object.entries(value as Record<string, unknown>).map(
    ([key, v]) => `${NAME.test(key) ? key : JSON.stringify(key)}: ${literal(v, style + 1)}`,
  );
  return `{${fields.join(', ')}}`;
}

/** The type of a variable as declared: usually the argument's own, sometimes another. */
const DECLARED = fc.oneof(
  { weight: 20, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constantFrom('String', 'Int', 'ID!', '[String!]!', 'Boolean', 'DateTime', 'EventFilter', 'Nope', '[[Int]]') },
);

export interface GeneratedOperation {
  query: string;
  variables: Record<string, unknown>;
  operationName?: string;
}

interface Part {
  text: string;
  variables: [string, string, unknown][];
}

/** Arguments of a field, each given inline or as a variable, or left out. */
function argumentsOf(args: readonly GraphQLArgument[], pools: Pools, depth: number, prefix: string): fc.Arbitrary<Part> {
  if (args.length === 0) return fc.constant({ text: '', variables: [] });
  const each = args.map((arg) =>
    fc
      .option(fc.tuple(inputValue(arg.type, arg.name, pools, depth), fc.boolean(), fc.nat(1000), DECLARED), {
        freq: arg.type instanceof GraphQLNonNull ? 40 : 3,
      })
      .map((chosen) => ({ arg, chosen })),
  );
  return fc.tuple(...each).map((list) => {
    const parts: string[] = [];
    const variables: [string, string, unknown][] = [];
    for (const { arg, chosen } of list) {
      if (!chosen) continue;
      const [value, asVariable, style, declared] = chosen;
      if (asVariable) {
        const name = `${prefix}_${arg.name}`;
        variables.push([name, declared || String(arg.type), value]);
        parts.push(`${arg.name}: $${name}`);
      } else parts.push(`${arg.name}: ${literal(value, style)}`);
    }
    return { text: parts.length ? `(${parts.join(', ')})` : '', variables };
  });
}

/** A selection on an output type: some leaf fields and up to two nested fields with arguments. */
function selection(type: GraphQLOutputType, pools: Pools, depth: number, prefix: string): fc.Arbitrary<Part> {
  const named = getNamedType(type);
  if (isLeafType(named)) return fc.constant({ text: '', variables: [] });
  if (depth > 3) return fc.constant({ text: '{ __typename }', variables: [] });
  const fields = Object.values((named as GraphQLObjectType | GraphQLInterfaceType).getFields());
  const leaves = fields.filter((f) => isLeafType(getNamedType(f.type)));
  const nested = fields.filter((f) => !isLeafType(getNamedType(f.type)));
  const pickLeaves = leaves.length ? fc.subarray(leaves, { minLength: 1 }) : fc.constant([{ name: '__typename' }]);
  const pickNested = nested.length
    ? fc.subarray(nested, { maxLength: Math.min(2, nested.length) })
    : fc.constant([] as GraphQLField<unknown, unknown>[]);
  return fc.tuple(pickLeaves, pickNested).chain(([leafFields, nestedFields]) =>
    fc.tuple(...nestedFields.map((f, i) => fieldPart(f, pools, depth + 1, `${prefix}_${i}`))).map((children) => {
      const variables = children.flatMap((c) => c.variables);
      const text = [...leafFields.map((f) => f.name), ...children.map((c) => c.text)].join(' ');
      const typename = named instanceof GraphQLInterfaceType ? ' __typename ... on Event { title } ... on Organizer { slug }' : '';
      return { text: `{ ${text}${typename} }`, variables };
    }),
  );
}

function fieldPart(field: GraphQLField<unknown, unknown>, pools: Pools, depth: number, prefix: string): fc.Arbitrary<Part> {
  return fc.tuple(argumentsOf(field.args, pools, depth, prefix), selection(field.type, pools, depth, prefix)).map(([args, sel]) => ({
    text: `${field.name}${args.text} ${sel.text}`,
    variables: [...args.variables, ...sel.variables],
  }));
}

const rootFields = (kind: 'Query' | 'Mutation') =>
  Object.values((kind === 'Query' ? schema.getQueryType() : schema.getMutationType())!.getFields());

/** One operation on one to three root fields of the schema. */
export function schemaOperation(
  pools: Pools,
  kind: fc.Arbitrary<'Query' | 'Mutation'> = fc.constantFrom('Query', 'Mutation'),
): fc.Arbitrary<GeneratedOperation> {
  return kind.chain((k) =>
    fc
      .uniqueArray(fc.constantFrom(...rootFields(k)), { minLength: 1, maxLength: 3, selector: (f) => f.name })
      .chain((fields) => fc.tuple(...fields.map((f, i) => fieldPart(f, pools, 0, `v${i}`))))
      .map((parts) => {
        const variables = parts.flatMap((p) => p.variables);
        const declarations = variables.length ? `(${variables.map(([name, type]) => `$${name}: ${type}`).join(', ')})` : '';
        return {
          query: `${k === 'Query' ? 'query' : 'mutation'} Fuzz${declarations} { ${parts.map((p) => p.text).join(' ')} }`,
          variables: Object.fromEntries(variables.map(([name, , value]) => [name, value])),
          operationName: 'Fuzz',
        };
      }),
  );
}

/** Pieces of GraphQL syntax, shuffled into documents that almost parse. */
const TOKENS = [
  '{',
  '}',
  '(',
  ')',
  '[',
  ']',
  ':',
  '!',
  '$',
  '@',
  '...',
  '|',
  '&',
  '=',
  ',',
  '#',
  '\n',
  '"',
  '"""',
  '\\',
  'query',
  'mutation',
  'subscription',
  'fragment',
  'on',
  'schema',
  'type',
  'extend',
  'directive',
  'viewer',
  'events',
  'event',
  'node',
  'organizer',
  'user',
  'nodes',
  'edges',
  'id',
  'title',
  'slug',
  '__typename',
  '__schema',
  '__type',
  'first',
  'after',
  'input',
  'null',
  'true',
  '1',
  '-0',
  '1e400',
  '0x1',
  '@skip(if: true)',
  '@include(if: $x)',
  '@deprecated',
  '$x',
  '"a"',
  '"\\u0000"',
  '"\\ud800"',
  '"\\uZZZZ"',
  '"\\',
];

export const garbledDocument: fc.Arbitrary<string> = fc
  .array(fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...TOKENS) }, { weight: 1, arbitrary: hostileText }), { maxLength: 60 })
  .map((tokens) => tokens.join(' '));

/**
 * Hostile shapes built from valid pieces: nesting, aliases, fragments, directives, operation names.
 * Sizes stay below two known failures being fixed separately (issue 13): a document of 10,000 or more
 * nodes (HTTP 500) and thousands of repeated `__typename` (200 "Validation aborted.").
 */
export const structuralDocument: fc.Arbitrary<GeneratedOperation> = fc.oneof(
  // Nesting deeper than the limits (organizer → events → organizer …).
  fc.integer({ min: 1, max: 60 }).map((depth) => ({
    query: `{ ${'events(first: 1) { nodes { organizer { '.repeat(depth)}slug${' } } }'.repeat(depth)} }`,
    variables: {},
  })),
  // Introspection nested as deep as a client may write it.
  fc.integer({ min: 1, max: 60 }).map((depth) => ({
    query: `{ __schema { types { fields { type { ${'ofType { '.repeat(depth)}name${' }'.repeat(depth)} } } } } }`,
    variables: {},
  })),
  // Lists in arguments nested deep.
  fc
    .integer({ min: 1, max: 1500 })
    .map((depth) => ({ query: `{ events(first: ${'['.repeat(depth)}1${']'.repeat(depth)}) { totalCount } }`, variables: {} })),
  // Many aliases of a root field (each one a page: the cost limit must stop them).
  fc
    .tuple(
      fc.integer({ min: 1, max: 400 }),
      fc.constantFrom('events(first: 100) { nodes { id } }', 'organizer(slug: "x") { id }', '__typename', 'viewer { id }'),
    )
    .map(([count, field]) => ({ query: `{ ${Array.from({ length: count }, (_, i) => `a${i}: ${field}`).join(' ')} }`, variables: {} })),
  // Fragments: many, unused, recursive, on the wrong type.
  fc
    .constantFrom(
      'query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }',
      'query { events { nodes { ...E } } } fragment E on Organizer { slug }',
      'query { __typename } fragment Unused on Event { id }',
      'query { ...on Query { ...on Query { ...on Query { events { totalCount } } } } }',
      'query A { __typename } query A { __typename }',
      'query A { __typename } query B { __typename }',
      '{ __typename } { __typename }',
      'subscription { events { totalCount } }',
      'query { __typename @skip(if: "yes") }',
      'query($x: Boolean!) { __typename @include(if: $x) @skip(if: $x) @deprecated }',
      'query($x: Int = "a") { events(first: $x) { totalCount } }',
      'query($x: Int, $x: Int) { events(first: $x) { totalCount } }',
      'query { events(first: 1, first: 2) { totalCount } }',
      'query { node(id: "") { id } }',
      '{ __type(name: "\\u0000") { name } }',
      '{ __type(name: "Event") { fields(includeDeprecated: true) { args { type { name } } } } }',
      'schema { query: Query }',
      'type Query { x: Int }',
      '',
      ' ',
      '#',
    )
    .map((query) => ({ query, variables: {} })),
);

/** Selections of introspection's `__Type`, small and large, each a candidate for aliases and repeats. */
const TYPE_SELECTIONS = [
  'name',
  'kind',
  '__typename',
  'description',
  'fields { name }',
  'fields(includeDeprecated: true) { name args { name type { name } } }',
  'fields { type { kind name ofType { kind name ofType { name } } } }',
  'fields { type { ofType { fields { name description } } } }',
  'inputFields { name defaultValue }',
  'enumValues(includeDeprecated: true) { name isDeprecated }',
  'interfaces { name possibleTypes { name } }',
  'possibleTypes { name interfaces { name } }',
  '...T',
  '... on __Type { name fields { name } }',
  'ofType { name }',
];

/**
 * Aliased introspection as an attacker writes it: `__schema` and `__type` roots repeated under
 * aliases, their `__Type` selections aliased again, through a named fragment spread many times,
 * inline fragments and `@include`. The cost model prices each by what it answers; the caller of this
 * checks that whatever is admitted stays within the bounds the cost limits state.
 */
export const aliasedIntrospection: fc.Arbitrary<GeneratedOperation> = fc
  .record({
    roots: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 700 })),
    root: fc.constantFrom(
      '__schema { types { %T } }',
      '__type(name: "Event") { %T }',
      '__schema { queryType { %T } }',
      '__type(name: "Query") { fields { type { %T } } }',
    ),
    selections: fc.array(fc.constantFrom(...TYPE_SELECTIONS), { minLength: 1, maxLength: 6 }),
    aliases: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 20 })),
    fragment: fc.array(fc.constantFrom(...TYPE_SELECTIONS.filter((s) => s !== '...T')), { minLength: 1, maxLength: 4 }),
    include: fc.boolean(),
  })
  .map(({ roots, root, selections, aliases, fragment, include }) => {
    const inner = selections.flatMap((selection, i) =>
      Array.from({ length: selection.startsWith('...') ? 1 : aliases }, (_, j) =>
        selection.startsWith('...') ? selection : `s${i}_${j}: ${selection}`,
      ),
    );
    const body = root.replace('%T', inner.join(' '));
    const condition = include ? ' @include(if: $on)' : '';
    const rootsText = Array.from({ length: roots }, (_, i) => `r${i}: ${body.replace(' {', `${condition} {`)}`).join(' ');
    const usesFragment = inner.includes('...T');
    return {
      query: `query${include ? '($on: Boolean!)' : ''} { ${rootsText} }${usesFragment ? ` fragment T on __Type { ${fragment.join(' ')} }` : ''}`,
      variables: include ? { on: true } : {},
    };
  });
