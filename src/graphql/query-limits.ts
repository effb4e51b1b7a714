import { GraphQLError, Lexer, Source, TokenKind } from 'graphql';

/**
 * The fixed limits of every GraphQL document, whoever sends it. They bound the work (and the stack)
 * of parsing, validating and analysing a document before anything else looks at it; the depth and
 * cost of operations are settings (`config.graphql.limits`).
 */
/** Names, punctuation and values of the document (comments not counted). */
export const MAX_TOKENS = 15_000;
/**
 * Brackets (`{`, `[`, `(`) open at once, and selection sets nested once fragments are spread where
 * they are used: parsing, validation and the cost analysis recurse once per level.
 */
export const MAX_NESTING = 200;
/** Selections of the operation, a fragment counted each time it is spread. */
export const MAX_SELECTIONS = 10_000;
/** graphql-js's MaxIntrospectionDepthRule: `fields`, `interfaces`, `possibleTypes`, `inputFields` nest at most 2 deep. */
export const MAX_INTROSPECTION_DEPTH = 2;

export type QueryLimitCode = 'QUERY_TOO_LARGE' | 'QUERY_TOO_DEEP' | 'QUERY_TOO_COMPLEX';
export type QueryLimit = 'tokens' | 'nesting' | 'selections' | 'depth' | 'cost' | 'introspectionDepth' | 'validation';

/**
 * A request refused by a limit: HTTP 400 whatever the media type (a refusal of the request, not a
 * result of running it), `extensions.code` and `extensions.limit` stable, the numbers beside them.
 */
export class QueryLimitError extends GraphQLError {
  constructor(
    readonly code: QueryLimitCode,
    readonly limit: QueryLimit,
    message: string,
    numbers: Record<string, number> = {},
    nodes?: GraphQLError['nodes'],
  ) {
    super(message, { nodes, extensions: { code, limit, ...numbers, http: { status: 400 } } });
  }

  static tooManyTokens(): QueryLimitError {
    return new QueryLimitError(
      'QUERY_TOO_LARGE',
      'tokens',
      `Query has more than ${MAX_TOKENS} tokens (names, values and punctuation); the limit is ${MAX_TOKENS}.`,
      { maxTokens: MAX_TOKENS },
    );
  }

  static nestedTooDeep(): QueryLimitError {
    return new QueryLimitError(
      'QUERY_TOO_DEEP',
      'nesting',
      `Query nests more than ${MAX_NESTING} levels deep (brackets, or fragments spread inside fragments); the limit is ${MAX_NESTING}.`,
      { maxNesting: MAX_NESTING },
    );
  }

  static tooManySelections(): QueryLimitError {
    return new QueryLimitError(
      'QUERY_TOO_LARGE',
      'selections',
      `Query selects more than ${MAX_SELECTIONS} fields (a fragment counts each time it is spread); the limit is ${MAX_SELECTIONS}.`,
      { maxSelections: MAX_SELECTIONS },
    );
  }

  static tooDeep(depth: number, maxDepth: number): QueryLimitError {
    return new QueryLimitError('QUERY_TOO_DEEP', 'depth', `Query is nested ${depth} levels deep; the limit is ${maxDepth}.`, {
      depth,
      maxDepth,
    });
  }

  /** `counted`: false when counting may have stopped at `cost`, one past every limit (operationCost). */
  static tooCostly(cost: number, maxCost: number, counted = true): QueryLimitError {
    return new QueryLimitError(
      'QUERY_TOO_COMPLEX',
      'cost',
      `Query would cost ${counted ? '' : 'at least '}${cost} points; the limit is ${maxCost}. ` +
        'Ask for fewer items per page, fewer fields or fewer aliases.',
      { cost, maxCost },
    );
  }
}

// Documents found within the limits, remembered so a client repeating its operations (the usual case)
// is not lexed again on every request: at most REMEMBERED_DOCUMENTS of at most REMEMBERED_LENGTH
// characters each (5 MB), forgotten all at once when full.
const REMEMBERED_DOCUMENTS = 500;
const REMEMBERED_LENGTH = 10_000;
const withinLimits = new Set<string>();

/**
 * Counts the document's tokens and bracket nesting with graphql-js's own lexer (iterative, so any
 * input is safe), stopping at the first limit passed. A syntax error is left to the parser to report.
 */
export function checkDocumentLimits(query: string): QueryLimitError | undefined {
  if (withinLimits.has(query)) return undefined;
  const refusal = countTokens(query);
  if (!refusal && query.length <= REMEMBERED_LENGTH) {
    if (withinLimits.size >= REMEMBERED_DOCUMENTS) withinLimits.clear();
    withinLimits.add(query);
  }
  return refusal;
}

function countTokens(query: string): QueryLimitError | undefined {
  const lexer = new Lexer(new Source(query));
  let tokens = 0;
  let nesting = 0;
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      if (++tokens > MAX_TOKENS) return QueryLimitError.tooManyTokens();
      if (token.kind === TokenKind.BRACE_L || token.kind === TokenKind.BRACKET_L || token.kind === TokenKind.PAREN_L) {
        if (++nesting > MAX_NESTING) return QueryLimitError.nestedTooDeep();
      } else if (token.kind === TokenKind.BRACE_R || token.kind === TokenKind.BRACKET_R || token.kind === TokenKind.PAREN_R) {
        nesting--;
      }
    }
  } catch {
    return undefined;
  }
  return undefined;
}

// graphql-js's own limits, which it reports as validation errors with these messages.
const VALIDATION_ABORTED = 'Validation aborted.';
const INTROSPECTION_TOO_DEEP = 'Maximum introspection depth exceeded';

/**
 * The limit an error stands for: ours, or one of graphql-js's reported as a validation failure
 * (Apollo wraps those as GRAPHQL_VALIDATION_FAILED, the graphql-js error as `originalError`).
 */
export function asQueryLimitError(error: unknown): QueryLimitError | undefined {
  if (error instanceof QueryLimitError) return error;
  if (!(error instanceof GraphQLError) || error.extensions.code !== 'GRAPHQL_VALIDATION_FAILED') return undefined;
  const cause = error.originalError instanceof GraphQLError ? error.originalError : error;
  if (cause.message === VALIDATION_ABORTED) {
    return new QueryLimitError(
      'QUERY_TOO_COMPLEX',
      'validation',
      'Query is too complex to validate: graphql-js stops comparing fields that share a name (or alias), and following ' +
        'fragment spreads, after a fixed amount of work. Select each field once and spread each fragment once.',
    );
  }
  if (cause.message === INTROSPECTION_TOO_DEEP) {
    return new QueryLimitError(
      'QUERY_TOO_DEEP',
      'introspectionDepth',
      `Introspection nests fields, interfaces, possibleTypes or inputFields ${MAX_INTROSPECTION_DEPTH + 1} levels deep; ` +
        `the limit is ${MAX_INTROSPECTION_DEPTH}.`,
      { maxIntrospectionDepth: MAX_INTROSPECTION_DEPTH },
      cause.nodes,
    );
  }
  return undefined;
}
