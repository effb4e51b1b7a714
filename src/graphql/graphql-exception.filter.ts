import { Catch } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthError, sendAuthError } from '../auth/auth.errors.js';
import { clientErrorOf, isUnavailable, prepareUnavailable } from '../errors/generic-errors.js';
import { UnstorableTextError } from '../errors/text-input.js';
import { TransportExceptionFilter } from '../errors/transport-exception.filter.js';
import { RateLimitError } from '../rate-limits/rate-limit.js';
import { RATE_LIMITED_CODE, SERVICE_UNAVAILABLE_MESSAGE } from './graphql-errors.js';

/**
 * GraphQL over HTTP, for what is refused before Apollo executes anything (errors inside an operation
 * are formatted by formatGraphqlError): the operation policy's and AuthGuard's 401/403 with the
 * contract's bodies, text that cannot be stored as BAD_USER_INPUT, a request Fastify could not read as
 * BAD_REQUEST, a request over its rate limit as RATE_LIMITED (429, `Retry-After`), an unreachable database as SERVICE_UNAVAILABLE (503, `Retry-After`), each in the
 * GraphQL error envelope. Anything else as elsewhere.
 */
@Catch()
export class GraphqlExceptionFilter extends TransportExceptionFilter {
  protected answerInProtocol(error: unknown, request: FastifyRequest, reply: FastifyReply): boolean {
    if (error instanceof AuthError) {
      sendAuthError(reply, error);
      return true;
    }
    if (error instanceof RateLimitError) {
      void reply.status(429).send({ errors: [{ message: error.message, extensions: { code: RATE_LIMITED_CODE } }] });
      return true;
    }
    if (error instanceof UnstorableTextError) {
      void reply.status(400).send({ errors: [{ message: error.message, extensions: { code: 'BAD_USER_INPUT', field: error.field } }] });
      return true;
    }
    const client = clientErrorOf(error);
    if (client) {
      void reply.status(client.status).send({ errors: [{ message: client.detail, extensions: { code: 'BAD_REQUEST' } }] });
      return true;
    }
    if (isUnavailable(error)) {
      prepareUnavailable(request, reply, error);
      void reply.status(503).send({ errors: [{ message: SERVICE_UNAVAILABLE_MESSAGE, extensions: { code: 'SERVICE_UNAVAILABLE' } }] });
      return true;
    }
    return false;
  }
}

export const graphqlErrors = new GraphqlExceptionFilter();
