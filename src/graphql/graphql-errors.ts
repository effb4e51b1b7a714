import { ApolloServerPlugin } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, GraphQLFormattedError } from 'graphql';
import { AuthError } from '../auth/auth.errors.js';
import { UnstorableTextError } from '../errors/text-input.js';
import { DomainError, DomainErrorKind } from '../errors/domain-error.js';
import { GraphqlContext } from './graphql-context.js';

const CODE_OF_KIND: Record<DomainErrorKind, string> = {
  invalid: 'BAD_USER_INPUT',
  not_found: 'NOT_FOUND',
  conflict: 'CONFLICT',
  forbidden: 'FORBIDDEN',
};

function isExpected(error: unknown): boolean {
  return (
    error instanceof DomainError || error instanceof AuthError || error instanceof GraphQLError || error instanceof UnstorableTextError
  );
}

/**
 * Maps errors to the GraphQL response: domain errors to `extensions.code` (with the domain's own code
 * as `reason`), auth errors to UNAUTHENTICATED/FORBIDDEN, anything unexpected to one generic
 * INTERNAL_SERVER_ERROR without its message (it is logged with the request id instead).
 */
export function formatGraphqlError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  const { locations, path } = formatted;
  if (original instanceof DomainError) {
    return {
      message: original.message,
      locations,
      path,
      extensions: { code: CODE_OF_KIND[original.kind], reason: original.code, ...(original.field ? { field: original.field } : {}) },
    };
  }
  // A string literal the validation rule refused (Apollo wraps it as a validation failure).
  const text = original instanceof GraphQLError ? original.originalError : undefined;
  if (text instanceof UnstorableTextError) {
    return { message: formatted.message, locations, path, extensions: { code: 'BAD_USER_INPUT', field: text.field } };
  }
  if (original instanceof AuthError) {
    return {
      message: original.message,
      locations,
      path,
      extensions: { code: original.code === 'UNAUTHENTICATED' ? 'UNAUTHENTICATED' : 'FORBIDDEN' },
    };
  }
  if (original instanceof GraphQLError) {
    const { stacktrace: _stacktrace, ...extensions } = formatted.extensions ?? {};
    return { ...formatted, extensions: { code: 'INTERNAL_SERVER_ERROR', ...extensions } };
  }
  return { message: 'Internal server error', locations, path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}

/** Logs unexpected resolver failures with the request's id, which the client can quote. */
export const errorLoggingPlugin: ApolloServerPlugin<GraphqlContext> = {
  async requestDidStart() {
    return {
      async didEncounterErrors({ errors, contextValue }) {
        for (const error of errors) {
          const original = unwrapResolverError(error);
          if (
            !isExpected(original) ||
            (original instanceof GraphQLError && original.originalError && !isExpected(original.originalError))
          ) {
            contextValue.req.log.error({ err: original, path: error.path }, 'GraphQL operation failed');
          }
        }
      },
    };
  },
};
