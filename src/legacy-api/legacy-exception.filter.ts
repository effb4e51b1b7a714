import { Catch } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthError, sendAuthError } from '../auth/auth.errors.js';
import { DomainError } from '../errors/domain-error.js';
import { sendDomainError, sendUnstorableText } from '../errors/generic-errors.js';
import { UnstorableTextError } from '../errors/text-input.js';
import { TransportExceptionFilter } from '../errors/transport-exception.filter.js';
import { RateLimitError } from '../rate-limits/rate-limit.js';
import { RequestValidationError } from './legacy-http.js';

/** Fields in the API's snake_case (`venue.country`, `starts_at`). */
const snakeCase = (path: string) => path.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The legacy API's errors: a malformed body or query is 400 with its problems by field; domain
 * errors (404, 409, 422, 403) and text that cannot be stored name fields in the API's snake_case;
 * credentials as the contract fixes them (401, 403 insufficient_scope); a request over its rate limit
 * 429 (`Retry-After`). Everything else as elsewhere.
 */
@Catch()
export class LegacyExceptionFilter extends TransportExceptionFilter {
  protected answerInProtocol(error: unknown, _request: FastifyRequest, reply: FastifyReply): boolean {
    if (error instanceof RequestValidationError) void reply.status(400).send({ message: error.message, errors: error.errors });
    else if (error instanceof AuthError) sendAuthError(reply, error);
    else if (error instanceof RateLimitError) void reply.status(429).send({ message: '429 Too Many Requests', error: error.message });
    else if (error instanceof UnstorableTextError) sendUnstorableText(reply, error, snakeCase);
    else if (error instanceof DomainError) sendDomainError(reply, error, snakeCase);
    else return false;
    return true;
  }
}
