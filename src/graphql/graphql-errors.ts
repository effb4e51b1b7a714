import { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import type { FastifyRequest } from 'fastify';
import { GraphQLError, GraphQLFormattedError } from 'graphql';
import { AuthError } from '../auth/auth.errors.js';
import { isDatabaseUnavailable, RETRY_AFTER_SECONDS } from '../errors/database-unavailable.js';
import { reportDatabaseUnavailable } from '../errors/generic-errors.js';
import { UnstorableTextError } from '../errors/text-input.js';
import { DomainError, DomainErrorKind } from '../errors/domain-error.js';
import { GraphqlContext } from './graphql-context.js';
import { asQueryLimitError, QueryLimitError } from './query-limits.js';

/** What an operation the database could not serve is told, in the response and over HTTP (503). */
/** The `extensions.code` of a request refused by its rate limit (429). */
export const RATE_LIMITED_CODE = 'RATE_LIMITED';

export const SERVICE_UNAVAILABLE_MESSAGE = 'The service is temporarily unavailable; try again shortly.';

const CODE_OF_KIND: Record<DomainErrorKind, string> = {
  invalid: 'BAD_USER_INPUT',
  not_found: 'NOT_FOUND',
  conflict: 'CONFLICT',
  forbidden: 'FORBIDDEN',
  rate_limited: RATE_LIMITED_CODE,
};

/** Whether an error is one the service means to give (domain, auth, text, or a GraphQL error with a code). */
function isExpected(error: unknown): boolean {
  if (error instanceof DomainError || error instanceof AuthError || error instanceof UnstorableTextError) return true;
  if (!(error instanceof GraphQLError)) return false;
  // graphql-js's own execution errors (a null for a non-null field, an unserialisable value) carry no
  // code: they are the service's faults, formatted as INTERNAL_SERVER_ERROR below.
  if (error.originalError) return isExpected(error.originalError) || error.originalError instanceof GraphQLError;
  return error.extensions.code !== undefined;
}

/**
 * Maps errors to the GraphQL response: domain errors to `extensions.code` (with the domain's own code
 * as `reason`), limits to their QUERY_TOO_* code with the limit's numbers, auth errors to
 * UNAUTHENTICATED/FORBIDDEN, anything unexpected to one generic INTERNAL_SERVER_ERROR without its
 * message (it is logged with the request id instead).
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
  const limit = asQueryLimitError(original);
  if (limit) {
    const { http: _http, ...extensions } = limit.extensions;
    return { message: limit.message, locations, extensions };
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
  if (isDatabaseUnavailable(original)) {
    return {
      message: SERVICE_UNAVAILABLE_MESSAGE,
      locations,
      path,
      extensions: { code: 'SERVICE_UNAVAILABLE' },
    };
  }
  if (original instanceof GraphQLError) {
    const { stacktrace: _stacktrace, ...extensions } = formatted.extensions ?? {};
    return { ...formatted, extensions: { code: 'INTERNAL_SERVER_ERROR', ...extensions } };
  }
  return { message: 'Internal server error', locations, path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}

/** A request refused by a limit: the client's to fix, so info, with what it ran into. */
export function logQueryLimit(req: FastifyRequest, error: QueryLimitError): void {
  const { http: _http, ...details } = error.extensions;
  req.log.info(details, 'GraphQL request refused by a limit');
}

/**
 * Logs unexpected failures (error) with the request's id, which the client can quote, and limits
 * (info). An unreachable database is a fault, not a bug: the response becomes HTTP 503 with
 * `Retry-After`, and the log line is counted with every other request's in the interval.
 */
export const errorLoggingPlugin: ApolloServerPlugin<GraphqlContext> = {
  // One listener for every request, given as one settled promise: a request without errors costs no
  // allocation here. The responses of requests that met an unreachable database are marked in a WeakSet.
  requestDidStart: () => ERROR_LOGGING_LISTENER,
};

const unavailableResponses = new WeakSet<object>();

const ERROR_LOGGING_LISTENER: Promise<GraphQLRequestListener<GraphqlContext>> = Promise.resolve({
  didEncounterErrors({ errors, contextValue, response }) {
    for (const error of errors) {
      const original = unwrapResolverError(error);
      const limit = asQueryLimitError(original);
      if (isDatabaseUnavailable(original)) {
        unavailableResponses.add(response);
        reportDatabaseUnavailable(contextValue.req, original);
      } else if (limit) logQueryLimit(contextValue.req, limit);
      else if (!isExpected(original)) contextValue.req.log.error({ err: original, path: error.path }, 'GraphQL operation failed');
    }
    return SETTLED;
  },
  willSendResponse({ response }) {
    if (unavailableResponses.has(response)) {
      response.http.status = 503;
      response.http.headers.set('retry-after', String(RETRY_AFTER_SECONDS));
    }
    return SETTLED;
  },
});

const SETTLED = Promise.resolve();
