import { GraphQLError } from 'graphql';
import { errorLoggingPlugin, formatGraphqlError } from './graphql-errors.js';
import { QueryLimitError } from './query-limits.js';

/** The levels and messages errorLoggingPlugin logs for one error. */
async function logged(error: GraphQLError): Promise<string[]> {
  const lines: string[] = [];
  const log = {
    info: (_: unknown, msg: string) => lines.push(`info ${msg}`),
    error: (_: unknown, msg: string) => lines.push(`error ${msg}`),
  };
  const listener = await errorLoggingPlugin.requestDidStart!({} as never);
  await listener!.didEncounterErrors!({ errors: [error], contextValue: { req: { log } } } as never);
  return lines;
}

describe('GraphQL errors', () => {
  it('log a GraphQL error without a code, which the client sees as INTERNAL_SERVER_ERROR, as an error', async () => {
    const error = new GraphQLError('Query exceeds the maximum allowed number of nodes.');
    expect(formatGraphqlError(error.toJSON(), error).extensions?.code).toBe('INTERNAL_SERVER_ERROR');
    expect(await logged(error)).toEqual(['error GraphQL operation failed']);
  });

  it('log a wrapped unexpected exception as an error', async () => {
    expect(await logged(new GraphQLError('Maximum call stack size exceeded', { originalError: new RangeError('x') }))).toEqual([
      'error GraphQL operation failed',
    ]);
  });

  it('log a limit at info, and client errors with a code not at all', async () => {
    expect(await logged(QueryLimitError.tooManySelections())).toEqual(['info GraphQL request refused by a limit']);
    expect(await logged(new GraphQLError('Cannot query field', { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }))).toEqual([]);
  });

  it('format a limit with its code and numbers, without the HTTP status', () => {
    const error = QueryLimitError.tooDeep(9, 8);
    expect(formatGraphqlError(error.toJSON(), error)).toEqual({
      message: 'Query is nested 9 levels deep; the limit is 8.',
      extensions: { code: 'QUERY_TOO_DEEP', limit: 'depth', depth: 9, maxDepth: 8 },
    });
  });
});
