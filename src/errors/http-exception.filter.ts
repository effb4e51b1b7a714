import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import { AuthError } from '../auth/auth.errors.js';
import { OAuthError } from '../oauth/oauth.errors.js';
import { DomainError, DomainErrorKind } from './domain-error.js';

const STATUS_OF_KIND: Record<DomainErrorKind, number> = {
  invalid: HttpStatus.UNPROCESSABLE_ENTITY,
  not_found: HttpStatus.NOT_FOUND,
  conflict: HttpStatus.CONFLICT,
  forbidden: HttpStatus.FORBIDDEN,
};

/** `{"message": "404 Not Found"}`: the status line as the message, GitLab-style. */
export function statusMessage(status: number): string {
  return `${status} ${STATUS_CODES[status] ?? 'Error'}`;
}

/**
 * The one mapping from errors to HTTP responses for controllers. Unknown errors become a generic 500,
 * logged with the request id; their text never reaches the client.
 */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  catch(error: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw error;
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    if (reply.sent) return;

    if (error instanceof AuthError) {
      void reply.status(error.status).header('www-authenticate', error.challenge).header('cache-control', 'no-store').send(error.body);
      return;
    }
    if (error instanceof OAuthError) {
      void reply.status(error.status).header('cache-control', 'no-store').header('pragma', 'no-cache');
      if (error.code === 'invalid_client') void reply.header('www-authenticate', 'Basic realm="agora", charset="UTF-8"');
      void reply.send(error.body);
      return;
    }
    if (error instanceof DomainError) {
      const status = STATUS_OF_KIND[error.kind];
      void reply.status(status).send({
        message: error.message,
        code: error.code,
        ...(error.field ? { errors: { [error.field]: [error.message] } } : {}),
      });
      return;
    }
    if (error instanceof HttpException) {
      const status = error.getStatus();
      void reply.status(status).send({ message: statusMessage(status) });
      return;
    }
    const status = (error as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      // Fastify's own client errors (malformed JSON, body too large, unsupported media type).
      void reply.status(status).send({ message: statusMessage(status), error: (error as Error).message });
      return;
    }
    request.log.error({ err: error }, 'Request failed');
    void reply.status(500).send({ message: statusMessage(500) });
  }
}
