import { buildSchema, GraphQLError, OperationDefinitionNode, parse, validate } from 'graphql';
import { fragmentsOf, measureOperation } from './operation-analysis.js';
import { asQueryLimitError, checkDocumentLimits, MAX_NESTING, MAX_SELECTIONS, MAX_TOKENS, QueryLimitError } from './query-limits.js';

const schema = buildSchema('type Query { a: String, b: Query, c: String }');

/** How Apollo reports a graphql-js validation error: GRAPHQL_VALIDATION_FAILED, the original inside. */
function asApolloValidationError(error: GraphQLError): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    originalError: error.originalError ?? error,
    extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
  });
}

function measure(document: string): ReturnType<typeof measureOperation> {
  const ast = parse(document);
  const operation = ast.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition')!;
  return measureOperation(operation, fragmentsOf(ast));
}

describe('document limits (before parsing)', () => {
  it('let a document with as many tokens and as deep brackets as allowed through', () => {
    expect(checkDocumentLimits(`{ ${'a '.repeat(MAX_TOKENS - 2)}}`)).toBeUndefined();
    expect(checkDocumentLimits(`${'{ b '.repeat(MAX_NESTING)}a${' }'.repeat(MAX_NESTING)}`)).toBeUndefined();
  });

  it('refuse one token more, not counting comments', () => {
    expect(checkDocumentLimits(`{ ${'a '.repeat(MAX_TOKENS - 1)}}`)?.extensions).toMatchObject({
      code: 'QUERY_TOO_LARGE',
      limit: 'tokens',
    });
    expect(checkDocumentLimits(`# ${'x '.repeat(MAX_TOKENS)}\n{ a }`)).toBeUndefined();
  });

  it('refuse brackets of any kind nested one level more', () => {
    const value = `${'['.repeat(MAX_NESTING - 2)}1${']'.repeat(MAX_NESTING - 2)}`;
    expect(checkDocumentLimits(`{ a(x: ${value}) }`)).toBeUndefined();
    expect(checkDocumentLimits(`{ a(x: [${value}]) }`)?.extensions).toMatchObject({ code: 'QUERY_TOO_DEEP', limit: 'nesting' });
  });

  it('leave syntax errors to the parser', () => {
    expect(checkDocumentLimits('{ a "unterminated')).toBeUndefined();
  });

  it('refuse a document every time it is sent: only documents within the limits are remembered', () => {
    const tooLarge = `{ ${'c '.repeat(MAX_TOKENS)}}`;
    const tooDeep = `${'{ d '.repeat(MAX_NESTING + 1)}e${' }'.repeat(MAX_NESTING + 1)}`;
    for (let i = 0; i < 3; i++) {
      expect(checkDocumentLimits(tooLarge)?.extensions).toMatchObject({ code: 'QUERY_TOO_LARGE' });
      expect(checkDocumentLimits(tooDeep)?.extensions).toMatchObject({ code: 'QUERY_TOO_DEEP' });
      expect(checkDocumentLimits('{ viewer { id } }')).toBeUndefined();
    }
    // Past the number remembered, the set starts over; a refused document is still refused.
    for (let i = 0; i < 1_200; i++) expect(checkDocumentLimits(`{ f${i} }`)).toBeUndefined();
    expect(checkDocumentLimits(tooLarge)?.extensions).toMatchObject({ code: 'QUERY_TOO_LARGE' });
  });
});

describe('operation limits (after validation)', () => {
  it('give the root fields and the depth, introspection not counted', () => {
    expect(measure('{ a b { a b { __schema { types { name } } } } ...F } fragment F on Query { c }')).toEqual({
      rootFields: new Set(['a', 'b', 'c']),
      depth: 2,
    });
  });

  it('count a fragment each time it is spread, and stop past the limit', () => {
    const fields = Array.from({ length: 99 }, (_, i) => `f${i}: a`).join(' ');
    const spreads = (n: number): string => `{ ${'...F '.repeat(n)}} fragment F on Query { ${fields} }`;
    expect(() => measure(spreads(MAX_SELECTIONS / 100))).not.toThrow();
    expect(() => measure(`{ a ${spreads(MAX_SELECTIONS / 100).slice(1)}`)).toThrow(QueryLimitError.tooManySelections());
  });

  it('refuse fragments spread inside fragments past the nesting limit', () => {
    const chain = (n: number): string =>
      `{ ...F0 } ${Array.from({ length: n }, (_, i) => `fragment F${i} on Query { ...F${i + 1} }`).join(' ')} fragment F${n} on Query { a }`;
    expect(() => measure(chain(MAX_NESTING - 2))).not.toThrow();
    expect(() => measure(chain(MAX_NESTING - 1))).toThrow(QueryLimitError.nestedTooDeep());
  });
});

describe("graphql-js's own limits", () => {
  it('are recognised in the validation errors Apollo reports, with their numbers', () => {
    const aborted = validate(schema, parse(`{ ${'a '.repeat(1000)}}`));
    expect(aborted.at(-1)!.message).toBe('Validation aborted.');
    expect(asQueryLimitError(asApolloValidationError(aborted.at(-1)!))?.extensions).toMatchObject({
      code: 'QUERY_TOO_COMPLEX',
      limit: 'validation',
    });

    const introspection = validate(schema, parse('{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }'));
    expect(asQueryLimitError(asApolloValidationError(introspection[0]!))?.extensions).toMatchObject({
      code: 'QUERY_TOO_DEEP',
      limit: 'introspectionDepth',
      maxIntrospectionDepth: 2,
    });
  });

  it('leave other validation errors alone', () => {
    const [unknown] = validate(schema, parse('{ nope }'));
    expect(asQueryLimitError(asApolloValidationError(unknown!))).toBeUndefined();
    expect(asQueryLimitError(new Error('Validation aborted.'))).toBeUndefined();
  });
});
