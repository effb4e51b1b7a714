import type { ApolloServerOptionsWithGateway } from '@apollo/server';
import { DocumentNode, execute, ExecutionResult, getVariableValues, GraphQLError, GraphQLSchema, printSchema } from 'graphql';
import { CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import type { GraphqlContext } from './graphql-context.js';

type Gateway = ApolloServerOptionsWithGateway<GraphqlContext>['gateway'];
type Executor = NonNullable<Awaited<ReturnType<Gateway['load']>>['executor']>;
type ExecutionRequest = Parameters<Executor>[0];
type SchemaListener = Parameters<Gateway['onSchemaLoadOrUpdate']>[0];

/** A document is compiled the second time it runs: one sent once never pays for compiling. */
const RUNS_BEFORE_COMPILING = 1;

/** Per operation of a cached document: how often it ran uncompiled, then its compiled form (null: not compilable). */
type Entry = { runs: number } | { compiled: CompiledQuery | null };

/**
 * How Apollo Server executes operations: a document that runs again is compiled once into a function
 * (graphql-jit) and executed by it from then on; one seen for the first time, and any graphql-jit cannot
 * compile, are executed by graphql-js as before. Apollo still parses, validates, caches documents, runs
 * the plugins (the operation policy, limits, error logging) and formats every error; only execution is
 * replaced. It plugs in through Apollo's gateway interface, whose `load` hands over the schema and an
 * executor, and its schema callback the schema.
 *
 * Compiled queries live as long as Apollo keeps their document (its document store hands back the same
 * DocumentNode for a repeated query text), in a WeakMap keyed by it. Variables are coerced by graphql-js
 * first, so a bad variable gets graphql-js's own error (which Apollo answers as BAD_USER_INPUT, 400), and
 * errors of compiled execution are given graphql-js's shape before Apollo formats them.
 */
export class CompiledExecution implements Gateway {
  private readonly documents = new WeakMap<DocumentNode, Map<string, Entry>>();
  private listener?: SchemaListener;

  constructor(private readonly schema: GraphQLSchema) {}

  onSchemaLoadOrUpdate(listener: SchemaListener): () => void {
    this.listener = listener;
    return () => (this.listener = undefined);
  }

  async load(): ReturnType<Gateway['load']> {
    this.listener?.({ apiSchema: this.schema, coreSupergraphSdl: printSchema(this.schema) });
    return { executor: (request) => this.execute(request) };
  }

  async stop(): Promise<void> {}

  private async execute(request: ExecutionRequest): Promise<ExecutionResult> {
    const { document, operation, context } = request;
    const { variables, operationName } = request.request;
    const compiled = operation ? this.compiled(document, operationName ?? '') : null;
    if (!compiled) {
      return execute({ schema: this.schema, document, contextValue: context, variableValues: variables, operationName });
    }
    if (operation!.variableDefinitions?.length) {
      const coerced = getVariableValues(this.schema, operation!.variableDefinitions, variables ?? {}, { maxErrors: 50 });
      if (coerced.errors) return { errors: coerced.errors };
    }
    const result = await compiled.query(undefined, context, variables);
    return result.errors ? { ...result, errors: result.errors.map(asGraphqlJsError) } : result;
  }

  /** The compiled operation, or null while it is run uncompiled. */
  private compiled(document: DocumentNode, operationName: string): CompiledQuery | null {
    let operations = this.documents.get(document);
    if (!operations) this.documents.set(document, (operations = new Map()));
    const entry = operations.get(operationName) ?? { runs: 0 };
    if ('compiled' in entry) return entry.compiled;
    if (entry.runs < RUNS_BEFORE_COMPILING) {
      operations.set(operationName, { runs: entry.runs + 1 });
      return null;
    }
    const result = compileQuery(this.schema, document, operationName || undefined);
    const compiled = isCompiledQuery(result) ? result : null;
    operations.set(operationName, { compiled });
    return compiled;
  }
}

/**
 * graphql-jit's errors carry the message, locations, path and original error, but not graphql-js's
 * `extensions` object (Apollo reads `extensions.code` of every error), so they are rebuilt as graphql-js
 * builds a resolver's error (`locatedError`): an error that already has its path is kept as it is.
 */
function asGraphqlJsError(error: GraphQLError): GraphQLError {
  const original = error.originalError;
  if (original instanceof GraphQLError && original.path) return original;
  const rebuilt = new GraphQLError(error.message, { path: error.path, originalError: original });
  (rebuilt as { locations: GraphQLError['locations'] }).locations = error.locations;
  return rebuilt;
}
