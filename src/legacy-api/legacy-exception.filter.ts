import { ArgumentsHost, Catch } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { HttpExceptionFilter } from '../errors/http-exception.filter.js';
import { RequestValidationError } from './legacy-http.js';

const snakeCase = (path: string) => path.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The legacy API's errors: a malformed body or query is 400 with its problems by field; domain
 * errors (404, 409, 422, 403) name fields in the API's snake_case. Everything else as elsewhere.
 */
@Catch()
export class LegacyExceptionFilter extends HttpExceptionFilter {
  override catch(error: unknown, host: ArgumentsHost): void {
    if (error instanceof RequestValidationError) {
      void host.switchToHttp().getResponse<FastifyReply>().status(400).send({ message: error.message, errors: error.errors });
      return;
    }
    super.catch(error, host);
  }

  /** Fields in the API's snake_case (`venue.country`, `starts_at`). */
  protected override fieldName(field: string): string {
    return snakeCase(field);
  }
}
